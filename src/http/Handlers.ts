// Thin handlers: the contract has decoded the input; each handler calls one service method.
import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { OpenApiDef } from "../../schema/Api.js"
import { AppConfig } from "../Config.js"
import { formatTimestamp } from "../domain/time.js"
import { Companies } from "../services/Companies.js"
import { Caller } from "../../schema/Auth.js"
import { CardImport } from "../services/CardImport.js"
import { Guests } from "../services/Guests.js"
import { readUpload } from "./multipart.js"
import { ImageBlacklist } from "../services/ImageBlacklist.js"
import { Matchmakers } from "../services/Matchmakers.js"
import { WorkGroups } from "../services/WorkGroups.js"
import { WorkWechats } from "../services/WorkWechats.js"

export const SystemHandlers = HttpApiBuilder.group(OpenApiDef, "system", (handlers) =>
  Effect.gen(function*() {
    const { timeZone } = yield* AppConfig
    return handlers.handle("time", () =>
      Effect.map(Clock.currentTimeMillis, (ms) => ({
        timestamp: Math.floor(ms / 1000),
        time: formatTimestamp(new Date(ms), timeZone)
      })))
  }))

export const MatchmakersHandlers = HttpApiBuilder.group(OpenApiDef, "matchmakers", (handlers) =>
  Effect.gen(function*() {
    const matchmakers = yield* Matchmakers
    return handlers
      .handle("list", ({ urlParams }) => matchmakers.list(urlParams))
      .handle("ids", ({ urlParams }) => matchmakers.ids(urlParams))
      .handle("get", ({ path }) => matchmakers.get(path.id))
      .handle("create", ({ payload }) => matchmakers.create(payload))
      .handle("update", ({ path, payload }) => matchmakers.update(path.id, payload))
  }))

export const CompaniesHandlers = HttpApiBuilder.group(OpenApiDef, "companies", (handlers) =>
  Effect.gen(function*() {
    const companies = yield* Companies
    return handlers
      .handle("list", ({ urlParams }) => companies.list(urlParams))
      .handle("get", ({ path }) => companies.get(path.id))
      .handle("create", ({ payload }) => companies.create(payload))
      .handle("update", ({ path, payload }) => companies.update(path.id, payload))
  }))

export const GuestsHandlers = HttpApiBuilder.group(OpenApiDef, "guests", (handlers) =>
  Effect.gen(function*() {
    const guests = yield* Guests
    const cards = yield* CardImport
    return handlers
      .handle("parseCard", ({ request }) => Effect.flatMap(readUpload(request), cards.parseCard))
      .handle("createFromCard", ({ request }) =>
        Effect.gen(function*() {
          const upload = yield* readUpload(request)
          const caller = yield* Caller
          return yield* cards.createFromCard(upload, caller.appKey)
        }))
      .handle("cardTask", ({ path }) => cards.getTask(path.task_id))
      .handle("list", ({ urlParams }) => guests.list(urlParams))
      .handle("get", ({ path }) => guests.get(path.id))
      .handle("create", ({ payload }) => guests.create(payload))
      .handle("update", ({ path, payload }) => guests.update(path.id, payload))
      .handle("batchCreate", ({ payload }) => guests.batchCreate(payload.guests))
      .handle("batchUpdate", ({ payload }) => guests.batchUpdate(payload.guests))
  }))

export const WorkWechatsHandlers = HttpApiBuilder.group(OpenApiDef, "workWechats", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* WorkWechats
    return handlers
      .handle("list", ({ urlParams }) => accounts.list(urlParams))
      .handle("get", ({ path }) => accounts.get(path.id))
      .handle("create", ({ payload }) => accounts.create(payload))
      .handle("update", ({ path, payload }) => accounts.update(path.id, payload))
      .handle("setStatus", ({ path, urlParams }) => accounts.setStatus(path.id, urlParams.status))
      .handle("remove", ({ path }) => accounts.remove(path.id))
      .handle("associate", ({ path, payload }) => accounts.associate(path.id, payload))
      .handle("batchAssociate", ({ path, payload }) => accounts.batchAssociate(path.id, payload))
      .handle("disassociate", ({ path, payload }) => accounts.disassociate(path.id, payload))
      .handle("transfer", ({ path, payload }) => accounts.transfer(path.id, payload))
      .handle("transferAdmin", ({ path, payload }) => accounts.transferAdmin(path.id, payload))
      .handle("associations", ({ path, urlParams }) => accounts.associations(path.id, urlParams))
      .handle("logs", ({ path, urlParams }) => accounts.logs(path.id, urlParams))
  }))

export const WorkGroupsHandlers = HttpApiBuilder.group(OpenApiDef, "workGroups", (handlers) =>
  Effect.gen(function*() {
    const groups = yield* WorkGroups
    return handlers
      .handle("list", ({ urlParams }) => groups.list(urlParams))
      .handle("get", ({ path }) => groups.get(path.id))
      .handle("create", ({ payload }) => groups.create(payload))
      .handle("update", ({ path, payload }) => groups.update(path.id, payload))
      .handle("setStatus", ({ path, urlParams }) => groups.setStatus(path.id, urlParams.status))
      .handle("remove", ({ path }) => groups.remove(path.id))
      .handle("addMatchmaker", ({ path, payload }) => groups.addMember(path.id, "matchmaker", payload.matchmaker_id, payload.remark ?? null))
      .handle("addMatchmakersBatch", ({ path, payload }) => groups.addMembers(path.id, "matchmaker", payload.matchmaker_ids, payload.remark ?? null))
      .handle("removeMatchmaker", ({ path }) => groups.removeMember(path.id, "matchmaker", path.matchmaker_id))
      .handle("addWorkWechat", ({ path, payload }) => groups.addMember(path.id, "work_wechat", payload.work_wechat_id, payload.remark ?? null))
      .handle("addWorkWechatsBatch", ({ path, payload }) => groups.addMembers(path.id, "work_wechat", payload.work_wechat_ids, payload.remark ?? null))
      .handle("removeWorkWechat", ({ path }) => groups.removeMember(path.id, "work_wechat", path.work_wechat_id))
      .handle("matchmakers", ({ path, urlParams }) => groups.matchmakerMembers(path.id, urlParams))
      .handle("workWechats", ({ path, urlParams }) => groups.accountMembers(path.id, urlParams))
      .handle("logs", ({ path, urlParams }) => groups.logs(path.id, urlParams))
  }))

export const ImageBlacklistHandlers = HttpApiBuilder.group(OpenApiDef, "imageBlacklist", (handlers) =>
  Effect.gen(function*() {
    const blacklist = yield* ImageBlacklist
    return handlers
      .handle("list", ({ urlParams }) => blacklist.list(urlParams))
      .handle("add", ({ payload }) => blacklist.add(payload.items))
      .handle("check", ({ payload }) => blacklist.check(payload.md5_list))
      .handle("remove", ({ path }) => blacklist.remove(path.record_id))
  }))
