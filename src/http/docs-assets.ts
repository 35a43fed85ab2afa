// The Swagger UI bundle is embedded in the binary (with {type: 'file'}), so /docs works with
// no internet; the plugin's `cdn` and `theme` options point at these routes.
import bundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import css from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }

export const DOCS_ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui-bundle.js': { path: bundle, type: 'text/javascript; charset=utf-8' },
  'swagger-ui.css': { path: css, type: 'text/css; charset=utf-8' },
}
