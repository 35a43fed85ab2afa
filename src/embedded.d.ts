// Files imported `with { type: 'text' | 'file' }` are embedded by `bun build --compile`.
declare module '*.sql' {
  const text: string
  export default text
}
declare module 'swagger-ui-dist/*' {
  const path: string
  export default path
}
// The dashboard's files and the ES modules of preact and htm (src/dashboard/assets.ts), as text.
declare module './ui/*' {
  const text: string
  export default text
}
declare module '*.mjs' {
  const text: string
  export default text
}
