// Files imported `with { type: 'text' | 'file' }` are embedded by `bun build --compile`.
declare module '*.sql' {
  const text: string
  export default text
}
declare module 'swagger-ui-dist/*' {
  const path: string
  export default path
}
