// The operator's view and rotation of secrets at rest (DECISIONS §13): `keys list` (each key id and
// how many values it seals, so an operator knows when an old key can go) and `keys rotate`
// (every sealed value re-sealed under the sealing key, in batches, while the service runs).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { type Place, placeOf, SEALED_COLUMNS, type SealedColumn, SecretBox, UnopenableSecret } from "../auth/SecretBox.js"
import { CLIENT_SECRET_COLUMNS, type KeptAnswer, type SealedCount, SealedValuesRepo } from "../repos/SealedValuesRepo.js"

/** At most this many values that do not open are named in `keys rotate`'s answer (all are counted). */
const UNOPENABLE_SHOWN = 50

type PerColumn = Record<SealedColumn, number>

const zeroPerColumn = (): PerColumn => Object.fromEntries(SEALED_COLUMNS.map((c) => [c, 0])) as PerColumn

const byColumn = (rows: ReadonlyArray<SealedCount>): Record<string, number> => Object.fromEntries(rows.map((r) => [r.column, r.n]))

const total = (rows: ReadonlyArray<SealedCount>): number => rows.reduce((n, r) => n + r.n, 0)

export class SealedSecrets extends Context.Service<SealedSecrets>()("SealedSecrets/Service", {
  make: Effect.gen(function*() {
    const repo = yield* SealedValuesRepo
    const box = yield* SecretBox

    /** Each key id (configured ones first, then any a stored value names) and what it seals. */
    const list = Effect.gen(function*() {
      const counts = yield* repo.count
      const sealedUnder = counts.filter((c) => c.scheme === "v2")
      const named = [...new Set(sealedUnder.map((c) => c.kid ?? ""))].filter((kid) => !box.keyIds.includes(kid))
      const keys = [...box.keyIds, ...named].map((kid) => {
        const rows = sealedUnder.filter((c) => c.kid === kid)
        return {
          kid,
          configured: box.keyIds.includes(kid),
          seals: kid === box.sealingKeyId,
          values: total(rows),
          by_column: byColumn(rows)
        }
      })
      const withoutKeyId = counts.filter((c) => c.scheme === "v1")
      // A value of the first scheme names no key: until it is re-sealed, every configured key may be its.
      const removable = total(withoutKeyId) > 0 ? [] : keys.filter((k) => k.configured && !k.seals && k.values === 0).map((k) => k.kid)
      return {
        sealing_key: box.sealingKeyId,
        keys,
        without_key_id: { values: total(withoutKeyId), by_column: byColumn(withoutKeyId) },
        plain_answers: total(counts.filter((c) => c.scheme === "plain")),
        unrecognised: total(counts.filter((c) => c.scheme === "unrecognised")),
        removable
      }
    })

    /**
     * Re-seals every value not under the sealing key, batch after batch (keyset order, so each row
     * is read once and a value that does not open is passed over): each written only where the
     * stored value is still the one read. A second run finds nothing to do.
     */
    const rotate = Effect.fnUntraced(function*(batchSize: number) {
      const prefix = `v2:${box.sealingKeyId}:`
      const resealed = zeroPerColumn()
      let plainAnswersSealed = 0
      let changedMeanwhile = 0
      let unopenableCount = 0
      const unopenable: Array<{ readonly column: SealedColumn; readonly row: ReadonlyArray<string>; readonly reason: string }> = []

      const resealOrNote = (sealed: string, at: Place): string | undefined => {
        try {
          return box.reseal(sealed, at)
        } catch (error) {
          if (!(error instanceof UnopenableSecret)) throw error
          unopenableCount++
          if (unopenable.length < UNOPENABLE_SHOWN) unopenable.push({ column: at.column, row: at.row, reason: error.message })
          return undefined
        }
      }

      let afterId = 0
      for (;;) {
        const rows = yield* repo.clientsBatch(afterId, prefix, batchSize)
        if (rows.length === 0) break
        afterId = rows[rows.length - 1]!.id
        for (const column of CLIENT_SECRET_COLUMNS) {
          const place = `clients.${column}` as const
          const replacements = rows.flatMap((row) => {
            const old = row[column]
            const sealed = old === null ? undefined : resealOrNote(old, placeOf(place, row.app_key))
            return old === null || sealed === undefined ? [] : [{ id: row.id, old, sealed }]
          })
          const written = yield* repo.replaceClients(column, replacements)
          resealed[place] += written
          changedMeanwhile += replacements.length - written
        }
      }

      let afterKey: { readonly app_key: string; readonly key: string } | null = null
      for (;;) {
        const rows: ReadonlyArray<KeptAnswer> = yield* repo.answersBatch(afterKey, prefix, batchSize)
        const last = rows[rows.length - 1]
        if (last === undefined) break
        afterKey = { app_key: last.app_key, key: last.key }
        const replacements = rows.flatMap((row) => {
          const at = placeOf("idempotency_keys.response_sealed", row.app_key, row.key)
          const sealed = row.response_sealed !== null
            ? resealOrNote(row.response_sealed, at)
            : row.response_body === null
            ? undefined
            : box.sealBytes(row.response_body, at)
          return sealed === undefined ? [] : [{
            app_key: row.app_key,
            key: row.key,
            old: row.response_sealed,
            body_md5: row.response_sealed === null ? row.body_md5 : null,
            sealed
          }]
        })
        const written = yield* repo.replaceAnswers(replacements)
        const plain = written.filter((wasPlain) => wasPlain).length
        plainAnswersSealed += plain
        resealed["idempotency_keys.response_sealed"] += written.length - plain
        changedMeanwhile += replacements.length - written.length
      }

      const after = yield* repo.count
      return {
        sealing_key: box.sealingKeyId,
        resealed,
        plain_answers_sealed: plainAnswersSealed,
        // Written by someone else between the read and the write (a client's rotation, a new
        // answer, an expiry): left as they are; `keys list` tells whether they need another run.
        changed_meanwhile: changedMeanwhile,
        unopenable_count: unopenableCount,
        unopenable,
        not_under_sealing_key: total(after.filter((c) => !(c.scheme === "v2" && c.kid === box.sealingKeyId)))
      }
    })

    return { list, rotate } as const
  })
}) {
  static readonly layerWithoutDependencies = Layer.effect(SealedSecrets, SealedSecrets.make)
  static readonly layer = SealedSecrets.layerWithoutDependencies.pipe(Layer.provide(SealedValuesRepo.layer))
}
