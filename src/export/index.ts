/**
 * A run's pages as a person reads them: JSONL records, one llms-full.txt style markdown
 * document, or a directory of markdown files. The route (GET /v1/runs/{id}/export), `trawl
 * export`, `trawl crawl -o/--out-dir` and the MCP crawl_export tool all read them from here.
 */
export { exportPages, type ExportDeps, type ExportOptions, type PageRecord } from './pages'
export { jsonlLine, llmsHeader, llmsSection } from './formats'
export { pagePath, writeOutDir } from './out-dir'
