/**
 * Errors of the work itself, whoever asked for it: the API, the CLI, MCP. Each carries a code
 * and a message and nothing of HTTP, so the store (whatever its engine) and the parsers can throw
 * them; src/http/app.ts is the one place that gives a code its status and body (decision 99).
 */

/**
 * The codes a domain error may carry, with the status each gets on the API (src/http/app.ts).
 * `not_html` and `parse_error` are the answers of MCP's extract, which reads a page itself.
 */
export type DomainCode = 'not_found' | 'conflict' | 'validation' | 'not_html' | 'parse_error'

/**
 * `C` widens the codes for an error family of its own (a scrape's target failures), which the
 * HTTP mapping answers as a failure of the work, 500, with the code as it is.
 */
export class DomainError<C extends string = DomainCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    opts?: ErrorOptions,
  ) {
    super(message, opts)
  }
}

export type FieldError = { field: string; errors: string[] }

/** Input that fails its checks, every failing field named (the API's 422 `fields`). */
export class ValidationError extends DomainError {
  constructor(readonly fields: FieldError[]) {
    super('validation', fields.map((f) => `${f.field}: ${f.errors.join(', ')}`).join('; '))
  }
  /** One failing field. */
  static of(field: string, ...errors: string[]) {
    return new ValidationError([{ field, errors }])
  }
}

export const notFound = (what: string) => new DomainError('not_found', `${what} not found`)
export const conflict = (message: string) => new DomainError('conflict', message)

/** Collects field errors from several checks and throws them together. */
export class FieldErrors {
  private readonly byField = new Map<string, string[]>()
  add(field: string, message: string) {
    const list = this.byField.get(field) ?? []
    if (!list.includes(message)) list.push(message)
    this.byField.set(field, list)
  }
  /** Runs a check; a ValidationError it throws joins these errors instead of escaping. */
  collect<T>(check: () => T): T | undefined {
    try {
      return check()
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err
      for (const f of err.fields) for (const e of f.errors) this.add(f.field, e)
      return undefined
    }
  }
  get size() {
    return this.byField.size
  }
  throwIfAny() {
    if (this.byField.size === 0) return
    throw new ValidationError([...this.byField].map(([field, errors]) => ({ field, errors })))
  }
}
