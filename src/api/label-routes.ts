import { Type, type TObject } from '@sinclair/typebox'
import { notFound } from '../http/errors'
import { route, type Route } from '../http/route'
import { Labels } from '../http/schemas'
import { MAX_LABELS } from '../store/labels'
import type { LabelStore } from '../store/types'
import { LabelsShape } from './shapes'

/**
 * GET, PUT (merge) and DELETE (by keys) of a resource's labels; all three answer
 * 200 `{"labels": {…the labels now}}` (design.md §3).
 */
export function labelRoutes(opts: { base: string; param: string; params: TObject; what: string; tag: string; repo: LabelStore }): Route[] {
  const path = `${opts.base}/:${opts.param}/labels`
  const key = (params: Record<string, unknown>) => params[opts.param] as string
  const answer = (labels: Record<string, string> | null) => {
    if (!labels) throw notFound(opts.what)
    return { status: 200, body: { labels } }
  }
  return [
    route({
      method: 'GET',
      path,
      summary: `Labels of a ${opts.what}`,
      tag: opts.tag,
      params: opts.params,
      response: { status: 200, schema: LabelsShape },
      handle: async ({ tenant, params }) => answer(await opts.repo.get(tenant, key(params))),
    }),
    route({
      method: 'PUT',
      path,
      summary: `Merge labels into a ${opts.what} (existing keys are replaced)`,
      tag: opts.tag,
      params: opts.params,
      body: Type.Object({ labels: Labels }, { additionalProperties: false }),
      response: { status: 200, schema: LabelsShape },
      handle: async ({ tenant, params, body }) => answer(await opts.repo.merge(tenant, key(params), body.labels)),
    }),
    route({
      method: 'DELETE',
      path,
      summary: `Delete labels of a ${opts.what} by key`,
      tag: opts.tag,
      params: opts.params,
      query: Type.Object({ keys: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: MAX_LABELS }) }, { additionalProperties: false }),
      response: { status: 200, schema: LabelsShape },
      handle: async ({ tenant, params, query }) => answer(await opts.repo.remove(tenant, key(params), query.keys)),
    }),
  ]
}
