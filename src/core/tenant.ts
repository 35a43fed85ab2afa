/** What a tenant id may be: the X-Tenant-Id header's and the CLI's --tenant's rule alike. */
export const TENANT_PATTERN = '^[A-Za-z0-9._:-]{1,128}$'
