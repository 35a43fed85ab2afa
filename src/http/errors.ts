/** Errors that say what the catcher must do: each maps to one status and one body shape. */

export type FieldError = { field: string; errors: string[] }

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    opts?: ErrorOptions,
  ) {
    super(message, opts)
  }
  body(): Record<string, unknown> {
    return { error: this.code, message: this.message }
  }
}

/** 422 with `{"error":"validation","fields":[…]}`. */
export class ValidationError extends ApiError {
  constructor(readonly fields: FieldError[]) {
    super(422, 'validation', fields.map((f) => `${f.field}: ${f.errors.join(', ')}`).join('; '))
  }
  override body() {
    return { error: 'validation', fields: this.fields }
  }
  /** One failing field. */
  static of(field: string, ...errors: string[]) {
    return new ValidationError([{ field, errors }])
  }
}

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`)
export const conflict = (message: string) => new ApiError(409, 'conflict', message)
export const payloadTooLarge = (limit: number) => new ApiError(413, 'payload_too_large', `request body is larger than ${limit} bytes`)

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
