import { TENANT_PATTERN } from '../core/tenant'
import { ApiError } from './errors'

export const TENANT_HEADER = 'x-tenant-id'
export { TENANT_PATTERN }
const TENANT = new RegExp(TENANT_PATTERN)

/** The tenant of a management request; 400 when the header is missing or malformed (design.md §3). */
export function tenantOf(request: Request): string {
  const value = request.headers.get(TENANT_HEADER)
  if (value === null || value === '') throw new ApiError(400, 'tenant_required', 'the X-Tenant-Id header is required')
  if (!TENANT.test(value)) throw new ApiError(400, 'invalid_tenant', `X-Tenant-Id must match ${TENANT_PATTERN}`)
  return value
}
