// One error type for contract violations. Expected outcomes (a held lock, a missing note)
// are values, never exceptions; an AirlockError is caught only at the boundaries
// (the tool runner, the CLI entry) and its message is shown to the caller as is.

export type ErrorCode =
  | "invalid_argument" // a tool argument broke a rule; nothing was changed
  | "store" // a store-level rule (kept with v2's "store: ..." wording)
  | "config" // bad configuration at start-up (token file, port, flags)
  | "unavailable" // the daemon could not be reached
  | "usage" // a command line the CLI refuses before doing anything (exit 2)
  | "internal";

export class AirlockError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "AirlockError";
  }
}

/** A message for anything thrown, without a stack trace. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
