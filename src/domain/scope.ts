// Company scopes (DECISIONS §14): which companies' records a client may read and change. An
// unscoped client (the platform's own systems, the daemon, the operator) sees every company; a
// scoped one only its companies' records, enforced by the repositories' SQL (each read takes a
// scope, so none can forget it) and by the write rules below.
import { InvalidInput, OutOfScope } from "./errors.js"

export type CompanyScope =
  /** Every company: unscoped clients, the daemon, the operator's command line. */
  | { readonly _tag: "All" }
  /** Only these companies (possibly none: a scoped client whose companies are all unbound). */
  | { readonly _tag: "Companies"; readonly ids: ReadonlyArray<number> }

export const all: CompanyScope = { _tag: "All" }

export const of = (ids: ReadonlyArray<number>): CompanyScope => ({
  _tag: "Companies",
  ids: [...new Set(ids)].sort((a, b) => a - b)
})

export const isScoped = (scope: CompanyScope): scope is Extract<CompanyScope, { readonly _tag: "Companies" }> => scope._tag === "Companies"

/**
 * The companies a query is limited to, as a SQL parameter: null for every company. A repository
 * adds `AND company_id = ANY ($ids)` (or its equivalent through a join) when it is not null.
 */
export const companyIds = (scope: CompanyScope): ReadonlyArray<number> | null => scope._tag === "All" ? null : scope.ids

/** Whether a record of this company is in the scope (a record without a company is in none). */
export const includes = (scope: CompanyScope, companyId: number | null | undefined): boolean =>
  scope._tag === "All" || (companyId !== null && companyId !== undefined && scope.ids.includes(companyId))

/** Whether a record belonging to any of these companies is in the scope (a match: either guest's). */
export const includesAny = (scope: CompanyScope, companyIds: ReadonlyArray<number | null>): boolean =>
  scope._tag === "All" || companyIds.some((id) => includes(scope, id))

/**
 * A `company_id` a write names: refused with 403 out_of_scope outside the scope (DECISIONS §14).
 * `path` names the field (`company_id`, `items[3].company_id`).
 */
export const checkNamed = (scope: CompanyScope, companyId: number, path = "company_id"): OutOfScope | undefined =>
  includes(scope, companyId)
    ? undefined
    : new OutOfScope({ message: `${path} ${companyId} is outside this client's companies`, company_id: companyId })

/**
 * The company of a write where `company_id` is optional: the named one (checked), else the
 * client's only company; a scoped client of several companies must name one (400), an unscoped
 * client leaves it unset (undefined).
 */
export const companyOfWrite = (
  scope: CompanyScope,
  named: number | undefined,
  path = "company_id"
): { readonly _tag: "Company"; readonly id: number | undefined } | {
  readonly _tag: "Refused"
  readonly error: OutOfScope | InvalidInput
} => {
  if (named !== undefined) {
    const refused = checkNamed(scope, named, path)
    return refused === undefined ? { _tag: "Company", id: named } : { _tag: "Refused", error: refused }
  }
  if (scope._tag === "All") return { _tag: "Company", id: undefined }
  if (scope.ids.length === 1) return { _tag: "Company", id: scope.ids[0] }
  return {
    _tag: "Refused",
    error: scope.ids.length === 0
      ? new OutOfScope({ message: "this client is bound to no company: it can create no record" })
      : InvalidInput.at(path, `required: this client is bound to several companies (${scope.ids.join(", ")})`)
  }
}

/** Creating a company, and the platform-wide resources, are for unscoped clients only. */
export const checkUnscoped = (scope: CompanyScope, what: string): OutOfScope | undefined =>
  scope._tag === "All" ? undefined : new OutOfScope({ message: `${what} is not open to a client bound to companies` })
