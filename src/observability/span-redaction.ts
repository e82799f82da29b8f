import type { Context, Attributes } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { isSensitiveKey, REDACTED, redactValue } from './redact';

/**
 * Scrubs every span before it reaches the exporter, with the logger's rules (redact.ts, src/card): card
 * numbers, credential shapes (Bearer/Basic values, JWTs, the gateway's API hash) and this process's secret
 * values anywhere in attribute values, event attributes (recorded exceptions) and the status message; and
 * whole values under sensitive names (`…header.authorization`, `…pin`, `…token`). The instrumentations are
 * configured not to record bodies, headers or Redis arguments in the first place (tracing-sdk.ts); this is
 * the net under them, so a new attribute from a library update cannot leak what the logger would not.
 */
export class RedactingSpanProcessor implements SpanProcessor {
  constructor(
    private readonly next: SpanProcessor,
    private readonly literals: () => readonly string[],
  ) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    const literals = this.literals();
    scrubAttributes(span.attributes, literals);
    for (const event of span.events) if (event.attributes) scrubAttributes(event.attributes, literals);
    for (const link of span.links) if (link.attributes) scrubAttributes(link.attributes, literals);
    if (span.status.message) (span.status as { message?: string }).message = redactValue(span.status.message, literals) as string;
    this.next.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/** In place: the SDK hands the ended span's own attribute objects to the processors, before any export. */
export function scrubAttributes(attributes: Attributes, literals: readonly string[] = []): void {
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null) continue;
    const name = key.slice(key.lastIndexOf('.') + 1);
    (attributes as Record<string, unknown>)[key] = isSensitiveKey(name) ? REDACTED : redactValue(value, literals);
  }
}

/**
 * db.statement for Redis: the command name only. The default serializer keeps arguments, which would put
 * cached card reference tokens (the token cache's values) and idempotency records into every trace.
 */
export function redisStatement(command: string): string {
  return command;
}
