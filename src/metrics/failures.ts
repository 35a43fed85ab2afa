/**
 * `target` with every method (and the methods of its plain nested objects, such as a store's
 * `runs.labels`) told to `failed` when it throws or its promise rejects, named by its path
 * (`runs.get`); the error goes on to the caller unchanged. One wrapper where a store or a blob
 * store is opened counts the failures of every caller, routes and runner alike, where counting
 * at each call would miss the calls nobody thought of. What a method answers is not wrapped.
 */
export function countingFailures<T extends object>(target: T, failed: (operation: string, err: unknown) => void, prefix = ''): T {
  const wrapped = new Map<PropertyKey, { from: unknown; to: unknown }>()
  return new Proxy(target, {
    get(t, key) {
      const value = Reflect.get(t, key, t)
      if (typeof key !== 'string' || value === null || (typeof value !== 'function' && !isPlainObject(value))) return value
      const known = wrapped.get(key)
      if (known && known.from === value) return known.to
      const operation = prefix + key
      const to = typeof value === 'function' ? counted(value as (...args: unknown[]) => unknown, t, operation, failed) : countingFailures(value as object, failed, `${operation}.`)
      wrapped.set(key, { from: value, to })
      return to
    },
  })
}

function counted(fn: (...args: unknown[]) => unknown, self: object, operation: string, failed: (operation: string, err: unknown) => void) {
  return (...args: unknown[]) => {
    let answer: unknown
    try {
      answer = fn.apply(self, args)
    } catch (err) {
      failed(operation, err)
      throw err
    }
    if (answer instanceof Promise)
      return answer.catch((err: unknown) => {
        failed(operation, err)
        throw err
      })
    return answer
  }
}

const isPlainObject = (v: unknown): v is object => typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)
