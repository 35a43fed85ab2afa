// The dashboard (docs/dashboard.md): its page, stylesheet and ES modules, with preact's and
// htm's modules as they ship, embedded as text so `npm start` and the compiled binary serve the
// same bytes and nothing is fetched from anywhere else (decision 114).
import indexHtml from './index.html' with { type: 'text' }
import styleCss from './ui/style.css' with { type: 'text' }
import apiJs from './ui/api.js' with { type: 'text' }
import appJs from './ui/app.js' with { type: 'text' }
import artifactsJs from './ui/artifacts.js' with { type: 'text' }
import chartsJs from './ui/charts.js' with { type: 'text' }
import dataMapsJs from './ui/data-maps.js' with { type: 'text' }
import formJs from './ui/form.js' with { type: 'text' }
import formatJs from './ui/format.js' with { type: 'text' }
import htmlJs from './ui/html.js' with { type: 'text' }
import jobFormJs from './ui/job-form.js' with { type: 'text' }
import jobsJs from './ui/jobs.js' with { type: 'text' }
import patternsJs from './ui/patterns.js' with { type: 'text' }
import paymentsJs from './ui/payments.js' with { type: 'text' }
import runGraphJs from './ui/run-graph.js' with { type: 'text' }
import runLogsJs from './ui/run-logs.js' with { type: 'text' }
import runPagesJs from './ui/run-pages.js' with { type: 'text' }
import runJs from './ui/run.js' with { type: 'text' }
import runsJs from './ui/runs.js' with { type: 'text' }
import tableJs from './ui/table.js' with { type: 'text' }
import triggersJs from './ui/triggers.js' with { type: 'text' }
import webhookDeliveriesJs from './ui/webhook-deliveries.js' with { type: 'text' }
import webhooksJs from './ui/webhooks.js' with { type: 'text' }
import preactMjs from '../../node_modules/preact/dist/preact.mjs' with { type: 'text' }
import hooksMjs from '../../node_modules/preact/hooks/dist/hooks.mjs' with { type: 'text' }
import htmMjs from '../../node_modules/htm/dist/htm.mjs' with { type: 'text' }
import { ERROR_REASONS, LOG_STATUSES, LOG_STEPS } from '../store/crawl-log-types'
import { PAYMENT_STATUSES } from '../store/payments'
import { RUN_OUTCOMES, STOP_REASONS } from '../store/runs'
import { DELIVERY_STATUSES, WEBHOOK_EVENTS } from '../store/webhook-model'

export type Asset = { body: string; type: string }

const JS = 'text/javascript; charset=utf-8'

/**
 * The API's names the pages offer as choices, written from the lists the API validates against,
 * so that a reason or an event added there is offered here too, with no copy to forget.
 */
const VOCABULARY = {
  LOG_STEPS,
  LOG_STATUSES,
  ERROR_REASONS,
  STOP_REASONS,
  RUN_OUTCOMES,
  PAYMENT_STATUSES,
  WEBHOOK_EVENTS,
  DELIVERY_STATUSES,
}
const vocabularyJs = `// Written by src/dashboard/assets.ts from the API's own lists.\n${Object.entries(VOCABULARY)
  .map(([name, values]) => `export const ${name} = ${JSON.stringify(values)}\n`)
  .join('')}`

const ui: Record<string, string> = {
  'api.js': apiJs,
  'app.js': appJs,
  'artifacts.js': artifactsJs,
  'charts.js': chartsJs,
  'data-maps.js': dataMapsJs,
  'form.js': formJs,
  'format.js': formatJs,
  'html.js': htmlJs,
  'job-form.js': jobFormJs,
  'jobs.js': jobsJs,
  'patterns.js': patternsJs,
  'payments.js': paymentsJs,
  'run-graph.js': runGraphJs,
  'run-logs.js': runLogsJs,
  'run-pages.js': runPagesJs,
  'run.js': runJs,
  'runs.js': runsJs,
  'table.js': tableJs,
  'triggers.js': triggersJs,
  'vocabulary.js': vocabularyJs,
  'webhook-deliveries.js': webhookDeliveriesJs,
  'webhooks.js': webhooksJs,
  'vendor/preact.mjs': preactMjs,
  'vendor/hooks.mjs': hooksMjs,
  'vendor/htm.mjs': htmMjs,
}

/** The files under /ui/{build}/, by their path there. */
export const UI_ASSETS: Record<string, Asset> = {
  'style.css': { body: styleCss, type: 'text/css; charset=utf-8' },
  ...Object.fromEntries(Object.entries(ui).map(([path, body]) => [path, { body, type: JS }])),
}

/**
 * A digest of every file: the URL segment that changes whenever any byte does, so the files can
 * be cached for good and a new binary's page never loads an old module.
 */
export const UI_BUILD = Bun.hash(
  Object.entries(UI_ASSETS)
    .map(([p, a]) => `${p}\0${a.body}`)
    .join('\0'),
)
  .toString(36)
  .slice(0, 10)

/** The page at `/`: index.html with the build's prefix filled in. */
// Bun's types take any .html import for an HTML bundle; imported as text, it is the file's text.
export const INDEX_HTML = (indexHtml as unknown as string).replaceAll('{{UI}}', `/ui/${UI_BUILD}`)
