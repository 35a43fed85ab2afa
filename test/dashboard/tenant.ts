import type { BrowserPage } from '../helpers/chromium'

/**
 * Stores `tenant` as the dashboard's chosen one (what its tenant form keeps in localStorage), then
 * leaves the page, so the next goto loads the dashboard anew with it. dashboard.test.ts drives the
 * form itself; the other files start from a chosen tenant.
 */
export async function presetTenant(page: BrowserPage, managementUrl: string, tenant: string): Promise<void> {
  await page.goto(`${managementUrl}/`)
  await page.evaluate(`localStorage.setItem('trawl.tenant', ${JSON.stringify(tenant)})`)
  await page.goto('about:blank')
}
