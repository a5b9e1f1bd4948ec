// Traces over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: Effect's spans (one per request,
// per job run, per SQL statement, and the ones the code names) go to an OpenTelemetry collector,
// batched, as OTLP JSON. Unset, tracing is off: spans are not even created.
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as UrlParams from "effect/http/UrlParams"
import * as Layer from "effect/Layer"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import * as Option from "effect/Option"
import * as References from "effect/References"

import { optionalHttpUrl } from "../Config.js"
import { REDACTED_PARAMETERS } from "../domain/masking.js"

export interface TracingConfig {
  /** The collector's base URL (traces go to `<endpoint>/v1/traces`); none: no tracing. */
  readonly endpoint: Option.Option<string>
  readonly serviceName: string
}

/** OTEL_EXPORTER_OTLP_ENDPOINT (unset or empty: off) and OTEL_SERVICE_NAME, as OpenTelemetry names them. */
export const tracingConfig = (defaultServiceName: string): Config.Config<TracingConfig> =>
  Config.all({
    endpoint: optionalHttpUrl("OTEL_EXPORTER_OTLP_ENDPOINT"),
    serviceName: Config.String("OTEL_SERVICE_NAME").pipe(
      Config.map((s) => s.trim()),
      Config.withDefault(""),
      Config.map((s) => (s === "" ? defaultServiceName : s))
    )
  })

/** `<endpoint>/v1/traces`, as the OTLP exporter specification derives the traces URL from the base. */
export const tracesUrl = (endpoint: string): string => `${endpoint.endsWith("/") ? endpoint : `${endpoint}/`}v1/traces`

/** The server's request span is named `http.server <METHOD>`, as OpenTelemetry's HTTP instrumentation names it. */
const SpanNamesLive = Layer.succeed(HttpMiddleware.SpanNameGenerator)((request) => `http.server ${request.method}`)

/**
 * The query parameters a request's span (`url.full`, `url.query`) and a 5xx's error show as
 * `REDACTED`: effect's defaults (signed-URL signatures) and every parameter that may carry a masked
 * value (DECISIONS §13), whoever the client. The request log shows no query at all.
 */
export const RedactedQueryLive = Layer.succeed(UrlParams.CurrentRedactedNames)([
  ...UrlParams.CurrentRedactedNames.defaultValue(),
  ...REDACTED_PARAMETERS
])

/** The OTLP tracer for `endpoint`; spans are flushed when the layer is released (shutdown). */
export const otlpTracingLayer = (options: {
  readonly endpoint: string
  readonly serviceName: string
}): Layer.Layer<never> =>
  Layer.merge(
    OtlpTracer.layer({ url: tracesUrl(options.endpoint), resource: { serviceName: options.serviceName } }).pipe(
      Layer.provide([OtlpSerialization.layerJson, FetchHttpClient.layer])
    ),
    SpanNamesLive
  )

/** Tracing as configured: the OTLP tracer, or nothing at all. */
export const TracingLive = (defaultServiceName: string): Layer.Layer<never> =>
  Layer.unwrap(
    Effect.map(
      tracingConfig(defaultServiceName),
      (c) =>
        Option.match(c.endpoint, {
          // No collector: no spans at all, rather than spans nobody reads (about 2% of a request's CPU).
          onNone: () => Layer.succeed(References.TracerEnabled)(false),
          onSome: (endpoint) => otlpTracingLayer({ endpoint, serviceName: c.serviceName })
        })
    )
  ).pipe(Layer.orDie)
