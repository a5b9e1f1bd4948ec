// Companies (SPEC §2.8, §4.7): records, create/update bodies, list filters and endpoints.
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"

import * as Area from "./Area.js"
import { Unscoped } from "./Auth.js"
import { ContactPhone, Envelope, IdPath, ListOf, Paging, RequiredPermission, Text, Timestamp } from "./Common.js"
import { ErrorEnvelopes } from "./Errors.js"
import { CertLevel } from "./Matchmakers.js"

export const CompanyType = Schema.Literals(["normal", "franchisee"])
export const CompanyStatus = Schema.Literals(["frozen", "active", "pending", "rejected"])
export type CompanyStatus = typeof CompanyStatus.Type

/** Unified social credit code: 18 characters of the GB 32100 alphabet (no I, O, S, V, Z). */
export const CreditCode = Schema.String.check(
  Schema.isPattern(/^[0-9A-HJ-NPQRTUWXY]{18}$/u, { message: "must be an 18-character unified social credit code" })
)

const companyFields = {
  id: Schema.Int,
  name: Schema.String,
  contact_name: Schema.NullOr(Schema.String),
  contact_phone: Schema.NullOr(Schema.String),
  province: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  district: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  credit_code: Schema.NullOr(Schema.String),
  logo_url: Schema.NullOr(Schema.String),
  company_type: CompanyType,
  cert_level: CertLevel,
  status: CompanyStatus,
  created_at: Timestamp
}

export const CompanyListItem = Schema.Struct(companyFields).annotate({ identifier: "CompanyListItem" })
export const Company = Schema.Struct({ ...companyFields, updated_at: Timestamp }).annotate({ identifier: "Company" })
export type Company = typeof Company.Type

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

const companyWritable = {
  contact_name: nullable(Text(50)),
  contact_phone: nullable(ContactPhone),
  province: nullable(Text(50)),
  city: nullable(Text(50)),
  district: nullable(Text(50)),
  address: nullable(Text(255)),
  credit_code: nullable(CreditCode),
  logo_url: nullable(Text(255)),
  company_type: Schema.optionalKey(CompanyType)
}

export const CompanyCreate = Schema.Struct({ name: Text(100, 2), ...companyWritable })
  .annotate({ identifier: "CompanyCreate" })
export type CompanyCreate = typeof CompanyCreate.Type

export const CompanyUpdate = Schema.Struct({
  name: Schema.optionalKey(Text(100, 2)),
  ...companyWritable
}).annotate({ identifier: "CompanyUpdate" })
export type CompanyUpdate = typeof CompanyUpdate.Type

/** PUT answer: id, name, every sent field with its stored value, updated_at. */
export const CompanyUpdated = Schema.StructWithRest(
  Schema.Struct({ id: Schema.Int, name: Schema.String, updated_at: Timestamp }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ identifier: "CompanyUpdated" })

export const COMPANY_PAGE = { default: 20, max: 100 } as const

export const CompanyListParams = Schema.Struct({
  ...Paging(COMPANY_PAGE),
  keyword: Schema.optional(Schema.String),
  status: Schema.optional(CompanyStatus),
  city: Schema.optional(Schema.String)
})
export type CompanyListParams = typeof CompanyListParams.Type

export class CompaniesApi extends HttpApiGroup.make("companies")
  .add(
    HttpApiEndpoint.get("list", "/companies", {
      disableCodecs: true,
      query: CompanyListParams.fields,
      success: Envelope(ListOf(CompanyListItem), "CompanyListEnvelope")
    })
      .annotate(RequiredPermission, "open:company:read")
      .annotate(OpenApi.Summary, "List companies")
  )
  .add(
    HttpApiEndpoint.get("get", "/companies/:id", {
      disableCodecs: true,
      params: IdPath,
      success: Envelope(Company, "CompanyEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, "open:company:read")
      .annotate(OpenApi.Summary, "Get a company")
  )
  .add(
    HttpApiEndpoint.post("create", "/companies", {
      disableCodecs: true,
      payload: CompanyCreate,
      success: Envelope(Company, "CompanyCreatedEnvelope")
    })
      .annotate(RequiredPermission, "open:company:manage")
      .annotate(OpenApi.Summary, "Create a company")
      .annotate(
        OpenApi.Description,
        "A new company is active; its status and cert_level are set by the platform's operators. A client bound to companies may not create one: 403 out_of_scope."
      )
      .middleware(Unscoped)
  )
  .add(
    HttpApiEndpoint.put("update", "/companies/:id", {
      disableCodecs: true,
      params: IdPath,
      payload: CompanyUpdate,
      success: Envelope(CompanyUpdated, "CompanyUpdatedEnvelope"),
      error: ErrorEnvelopes.NotFound
    })
      .annotate(RequiredPermission, "open:company:manage")
      .annotate(OpenApi.Summary, "Update a company")
      .annotate(OpenApi.Description, "Partial update: the answer lists the sent fields with their stored values.")
  )
  .annotate(OpenApi.Description, "Companies (and franchisees) that guests and matchmakers belong to.")
{}

/** The area: the group, how it is signed, and the names it owns. */
export const CompaniesArea = Area.permitted(CompaniesApi, {
  permissions: ["open:company:read", "open:company:manage"],
  resources: ["company"]
})

// The resource names this area's 404s carry (`resources` above), for the domain's `NotFound`.
declare module "../src/domain/errors.js" {
  interface ResourceNames {
    readonly company: true
  }
}
