// Operator commands for companies (DECISIONS §3): `companies status|cert-level ID VALUE`; each
// prints the company as it is after.
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"

import { CompanyStatus } from "../../schema/Companies.js"
import { CertLevel } from "../../schema/Matchmakers.js"
import { Companies } from "../services/Companies.js"
import { answering, idArgument } from "./cli.js"

export const companiesCommand = Command.make("companies").pipe(
  Command.withDescription("Companies: status and certification, set by the operator"),
  Command.withSubcommands([
    answering(
      "status",
      { id: idArgument(), status: Argument.Literals("STATUS", CompanyStatus.literals) },
      ({ id, status }) => Effect.flatMap(Companies, (c) => c.setStatus(id, status))
    ).pipe(Command.withDescription("Set a company's status")),
    answering(
      "cert-level",
      { id: idArgument(), level: Argument.Literals("LEVEL", CertLevel.literals) },
      ({ id, level }) => Effect.flatMap(Companies, (c) => c.setCertLevel(id, level))
    ).pipe(Command.withDescription("Set a company's certification level"))
  ])
)
