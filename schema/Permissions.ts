// Every permission string (SPEC §5), derived from the areas: each area names the strings its
// endpoints require in its registration (schema/Area.ts), so adding an area adds its permissions
// here without another list to edit. The admin command, the clients' rows and the outbox decode
// against it; test/areas.test.ts proves each string belongs to exactly one area.
import * as Schema from "effect/Schema"

import { AREAS } from "./Api.js"

/** A permission string some area's endpoints require. */
export type Permission = (typeof AREAS)[number]["permissions"][number]

/** Every permission string, in the order of the areas (the document's). */
export const ALL_PERMISSIONS: ReadonlyArray<Permission> = AREAS.flatMap((area): ReadonlyArray<Permission> => area.permissions)

export const Permission = Schema.Literals(ALL_PERMISSIONS)
