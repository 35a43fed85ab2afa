import { describe, expect, test } from 'bun:test'
import { robotsAgent } from '../../src/fetch/user-agents'

describe('robotsAgent', () => {
  test('browser keywords match robots.txt groups as Mozilla; trawl and custom strings as themselves', () => {
    for (const keyword of ['chrome', 'firefox', 'safari', 'random']) expect(robotsAgent(keyword)).toBe('Mozilla')
    expect(robotsAgent('trawl')).toBe('trawl')
    expect(robotsAgent('MyBot/2.0 (+https://example.com/bot)')).toBe('MyBot/2.0 (+https://example.com/bot)')
  })
})
