// Traces over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: Effect's spans (one per request,
// per job run, per SQL statement, and the ones the code names) go to an OpenTelemetry collector,
// batched. Unset, tracing is off: spans are not even created.
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as Resource from "@effect/opentelemetry/Resource"
import * as Tracer from "@effect/opentelemetry/Tracer"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

export interface TracingConfig {
  /** The collector's base URL (traces go to `<endpoint>/v1/traces`); none: no tracing. */
  readonly endpoint: Option.Option<string>
  readonly serviceName: string
}

/** OTEL_EXPORTER_OTLP_ENDPOINT (unset or empty: off) and OTEL_SERVICE_NAME, as OpenTelemetry names them. */
export const tracingConfig = (defaultServiceName: string): Config.Config<TracingConfig> =>
  Config.all({
    endpoint: Config.nested(
      Config.string().pipe(
        Config.mapOrFail((raw) => {
          const text = raw.trim()
          if (text === "") return Either.right(Option.none<string>())
          try {
            const url = new URL(text)
            if (url.protocol === "http:" || url.protocol === "https:") return Either.right(Option.some(text))
          } catch {
            // reported below
          }
          return Either.left(ConfigError.InvalidData([], `expected an http(s) URL; got ${JSON.stringify(raw)}`))
        })
      ),
      "OTEL_EXPORTER_OTLP_ENDPOINT"
    ).pipe(Config.withDefault(Option.none<string>())),
    serviceName: Config.string("OTEL_SERVICE_NAME").pipe(
      Config.map((s) => s.trim()),
      Config.withDefault(""),
      Config.map((s) => (s === "" ? defaultServiceName : s))
    )
  })

/** `<endpoint>/v1/traces`, as the OTLP exporter specification derives the traces URL from the base. */
export const tracesUrl = (endpoint: string): string => `${endpoint.endsWith("/") ? endpoint : `${endpoint}/`}v1/traces`

/**
 * Whether this process exports traces. Read per request by the server's tracer switch: without a
 * collector the platform's request span (a URL parse, header copies and attributes per request) is
 * not even started.
 */
export const tracingState = { exporting: false }

/** The OTLP tracer for `endpoint`; spans are flushed when the layer is released (shutdown). */
export const otlpTracingLayer = (options: { readonly endpoint: string; readonly serviceName: string }): Layer.Layer<never> =>
  Layer.unwrapEffect(Effect.sync(() => {
    tracingState.exporting = true
    return Tracer.layer.pipe(
      Layer.provide(
        NodeSdk.layerTracerProvider(new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(options.endpoint) })))
      ),
      Layer.provide(Resource.layer({ serviceName: options.serviceName })),
      Layer.discard
    )
  }))

/** Tracing as configured: the OTLP tracer, or nothing at all. */
export const TracingLive = (defaultServiceName: string): Layer.Layer<never> =>
  Layer.unwrapEffect(
    Effect.map(
      tracingConfig(defaultServiceName),
      (c) =>
        Option.match(c.endpoint, {
          // No collector: no spans at all, rather than spans nobody reads (about 2% of a request's CPU).
          onNone: () => Layer.setTracerEnabled(false),
          onSome: (endpoint) => otlpTracingLayer({ endpoint, serviceName: c.serviceName })
        })
    )
  ).pipe(Layer.orDie)
