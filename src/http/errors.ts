// Routes throw domain errors and API errors alike; one import serves them both.
export { FieldErrors, notFound, ValidationError, type FieldError } from '../core/errors'

/**
 * An error only HTTP has (a missing tenant header, a body too large, a method a path does not
 * answer, a route's own translation of a lower layer's failure): its status is part of it.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    opts?: ErrorOptions,
  ) {
    super(message, opts)
  }
}

export const payloadTooLarge = (limit: number) => new ApiError(413, 'payload_too_large', `request body is larger than ${limit} bytes`)
