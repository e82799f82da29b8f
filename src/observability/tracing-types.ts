/** The ids the logger adds to each line written inside a span. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** A span started by tokengate's own code; `end` is idempotent, an error marks the span failed. */
export interface SpanHandle {
  end(error?: unknown): void;
}

export interface Tracing {
  /** The active span's ids, or undefined outside any span. */
  currentIds(): TraceIds | undefined;
  /** Starts a child of the active span, without making it active (the caller's context stays the parent). */
  startSpan(name: string, attributes?: Record<string, string | number | boolean>): SpanHandle;
  /** Literal values (PIN, API key, JWT secret) to scrub from span attributes, like the logger does. */
  redactLiterals(values: readonly string[]): void;
  /** Flushes spans not exported yet. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}
