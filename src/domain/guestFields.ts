// The guest fields the rules read (SPEC §2.2, §2.3): the education, marital-status and status
// literals and the requirement_tags object. The contract (schema/Guests.ts) names them in its
// bodies and records; the rules here (completeness, the card, follow-ups, match scores) read them.
import * as Schema from "effect/Schema"

import { Int, Text } from "./schemaFields.js"

export const Education = Schema.Literals(["高中及以下", "大专", "本科", "硕士", "博士"])
export type Education = typeof Education.Type
export const MaritalStatus = Schema.Literals(["未婚", "离异", "丧偶"])
export type MaritalStatus = typeof MaritalStatus.Type
export const GuestStatus = Schema.Literals(["incomplete", "available", "matching", "matched", "archived"])
export type GuestStatus = typeof GuestStatus.Type

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))
const tagInt = (minimum: number, maximum: number) => nullable(Int.check(Schema.isBetween({ minimum, maximum })))

/** The structured partner requirement (SPEC §2.3); stored as sent. */
export const RequirementTags = Schema.Struct({
  age_min: tagInt(18, 100),
  age_max: tagInt(18, 100),
  height_min: tagInt(100, 250),
  height_max: tagInt(100, 250),
  weight_min: tagInt(30, 300),
  weight_max: tagInt(30, 300),
  income_min: tagInt(1, 6),
  income_max: tagInt(1, 6),
  education_min: tagInt(1, 5),
  marriage_status: nullable(Schema.Array(Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })))),
  has_children: nullable(Schema.Literals([0, 1])),
  has_car: nullable(Schema.Literals([0, 1])),
  has_house: nullable(Schema.Literals([0, 1])),
  locations: nullable(Schema.Array(Text(50, 1))),
  health: nullable(Schema.Array(Text(50, 1))),
  other: Schema.optionalKey(Text(500))
}).annotate({ identifier: "RequirementTags" })
export type RequirementTags = typeof RequirementTags.Type
