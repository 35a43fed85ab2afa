import { first, type Pg } from './pg'

/** The seq of a tenant's run; null when the tenant has no such run. */
export async function runSeqOf(sql: Pg, tenant: string, runId: string): Promise<number | null> {
  return first<{ seq: number }>(await sql`SELECT seq FROM runs WHERE tenant = ${tenant} AND id = ${runId}`)?.seq ?? null
}

/** The seq of a tenant's host; null when the tenant has no such host. */
export async function hostSeqOf(sql: Pg, tenant: string, hash: string): Promise<number | null> {
  return first<{ seq: number }>(await sql`SELECT seq FROM hosts WHERE tenant = ${tenant} AND hash = ${hash}`)?.seq ?? null
}

/** The seq of a tenant's job; null when the tenant has no such job. */
export async function jobSeqOf(sql: Pg, tenant: string, jobId: string): Promise<number | null> {
  return first<{ seq: number }>(await sql`SELECT seq FROM jobs WHERE tenant = ${tenant} AND id = ${jobId}`)?.seq ?? null
}
