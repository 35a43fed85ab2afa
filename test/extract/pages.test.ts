import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { applyDataMap } from '../../src/extract/data-map'
import type { Field } from '../../src/extract/field-schema'
import { extractFields } from '../../src/extract/fields'
import { baseOf, parseTree } from '../../src/extract/tree'
import { decodeDocument } from '../../src/parse/charset'

/** A checked-in page, decoded the way the service decodes fetched bytes (no Content-Type). */
async function page(name: string) {
  const bytes = new Uint8Array(await Bun.file(join(import.meta.dir, '../fixtures/extract', name)).arrayBuffer())
  const { text, charset } = decodeDocument(bytes, undefined)
  return { root: parseTree(text), charset }
}

describe('a news article', () => {
  const URL = 'https://ledger.example/news/2024/01/harbour-cranes-return'
  const fields: Field[] = [
    { name: 'headline', selector: 'article h1.headline', required: true },
    { name: 'standfirst', selector: '.standfirst' },
    {
      name: 'author',
      selector: '.byline',
      fields: [
        { name: 'name', selector: 'a[rel=author]', required: true },
        { name: 'url', selector: 'a[rel=author]', attr: 'href', type: 'url' },
        { name: 'role', selector: '.role' },
      ],
    },
    { name: 'published', selector: 'time.published', attr: 'datetime', type: 'date', required: true },
    { name: 'published_as_shown', selector: 'time.published', type: 'date' },
    { name: 'updated', selector: '.byline .updated', type: 'date' },
    { name: 'image', selector: '.lead-image img', attr: 'data-src', type: 'url' },
    { name: 'placeholder', selector: '.lead-image img', attr: 'src', type: 'url' },
    { name: 'caption', selector: '.lead-image figcaption', attr: 'html' },
    { name: 'paragraphs', selector: '.body > p', multiple: true },
    {
      name: 'related',
      selector: 'aside.related a',
      multiple: true,
      fields: [
        { name: 'title', selector: ':scope' },
        { name: 'url', selector: ':scope', attr: 'href', type: 'url' },
      ],
    },
    { name: 'tags', selector: 'a[rel~=tag]', multiple: true },
    { name: 'comments', selector: '.comment-count', type: 'integer' },
    { name: 'reading_minutes', selector: '.reading-time', type: 'number' },
    { name: 'json_ld', selector: 'script[type="application/ld+json"]' },
    { name: 'paywalled', selector: '.paywall', type: 'boolean' },
    { name: 'subtitle', selector: 'h2.subtitle', required: true },
  ]

  test('every field, with the failures reported beside the data', async () => {
    const { root } = await page('article.html')
    expect(extractFields(root, fields, baseOf(root, URL))).toEqual({
      data: {
        headline: 'Harbour cranes return to Port Ellis',
        standfirst: 'After a decade away, two container cranes are back on the quay — and the night shift is hiring.',
        author: { name: 'Maria Okafor', url: 'https://ledger.example/authors/maria-okafor', role: 'Transport correspondent' },
        published: '2024-01-05T07:30:00.000Z',
        published_as_shown: '2024-01-05T08:30:00.000Z',
        updated: '2024-01-06T09:15:00.000Z',
        image: 'https://ledger.example/news/media/2024/cranes.jpg',
        placeholder: null,
        caption: 'The cranes arrived by barge on Tuesday. <span class="credit">Photo: J. Reyes</span>',
        paragraphs: [
          'The two ship-to-shore cranes, each weighing 1,150 tonnes, were towed up the estuary overnight.',
          '“We lost the work to Northport in 2014,” said harbour master Ian Dunmore. “Now it comes back.”',
          'Reading time: 4 min. Comments: 37',
        ],
        related: [
          { title: 'Dredging finishes early', url: 'https://ledger.example/news/2023/11/port-ellis-dredging' },
          { title: "Elsewhere: Northport's new berth", url: 'https://other.example/story' },
        ],
        tags: ['Shipping', 'Jobs', 'Port Ellis'],
        comments: 37,
        reading_minutes: 4,
        json_ld: '{"@context":"https://schema.org","@type":"NewsArticle","headline":"Harbour cranes return to Port Ellis","datePublished":"2024-01-05T08:30:00+01:00"}',
        paywalled: null,
        subtitle: null,
      },
      errors: [
        { field: 'placeholder', error: 'invalid', message: '"data:image/gif;base64,R0lGODlhAQABAAAAACw=" is not an http(s) URL' },
        { field: 'subtitle', error: 'required', message: 'no element matches "h2.subtitle"' },
      ],
    })
  })
})

describe('a product listing with an item_selector', () => {
  const map = {
    item_selector: 'ul.grid > li.product-card',
    fields: [
      { name: 'sku', selector: ':scope', attr: 'data-sku', required: true },
      { name: 'title', selector: 'h2.title', required: true },
      { name: 'url', selector: 'a.card-link', attr: 'href', type: 'url', required: true },
      { name: 'image', selector: 'img.thumb', attr: 'src', type: 'url' },
      { name: 'price', selector: '.price .amount', type: 'number', required: true },
      { name: 'was', selector: '.price .was', type: 'number' },
      { name: 'rating', selector: '.rating', attr: 'data-rating', type: 'number' },
      { name: 'stock', selector: '.stock' },
      { name: 'colors', selector: '.colors > li', attr: 'data-color', multiple: true },
      { name: 'sponsored', selector: ':scope.sponsored', attr: 'data-sku' },
    ] as Field[],
  }

  test('one object per card; <base href> and scheme-relative links resolve; bad cards are reported by index', async () => {
    const { root } = await page('product-listing.html')
    const base = baseOf(root, 'https://shop.example/')
    expect(base).toBe('https://shop.example/catalog/')
    expect(applyDataMap(root, map, base)).toEqual({
      data: [
        {
          sku: 'TR-1001',
          title: 'Ridgeline 3',
          url: 'https://shop.example/p/ridgeline-3?ref=grid',
          image: 'https://shop.example/img/ridgeline-3_320.webp',
          price: 129.95,
          was: null,
          rating: 4.6,
          stock: 'In stock',
          colors: ['slate', 'ember'],
          sponsored: null,
        },
        {
          sku: 'TR-1002',
          title: 'Scree Runner',
          url: 'https://shop.example/p/scree-runner',
          image: 'https://shop.example/img/scree-runner_320.webp',
          price: 99,
          was: 149,
          rating: 4.1,
          stock: 'Only 3 left',
          colors: ['moss'],
          sponsored: null,
        },
        {
          sku: 'TR-1003',
          title: 'Fellrunner XT',
          url: 'https://cdn.shop.example/p/fellrunner-xt',
          image: 'https://shop.example/img/fellrunner-xt_320.webp',
          price: null,
          was: null,
          rating: null,
          stock: 'Sold out',
          colors: [],
          sponsored: null,
        },
        { sku: 'AD-77', title: 'Sponsored: Gel Insoles', url: null, image: null, price: 24.5, was: null, rating: null, stock: null, colors: [], sponsored: 'AD-77' },
      ],
      errors: [
        { field: '[2].price', error: 'invalid', message: '"Price on request" holds no number' },
        { field: '[3].url', error: 'invalid', message: '"javascript:void(0)" is not an http(s) URL' },
      ],
    })
  })
})

describe('a forum thread', () => {
  const fields: Field[] = [
    { name: 'title', selector: 'h1.thread-title', required: true },
    { name: 'replies', selector: '.thread-meta .replies', type: 'integer' },
    {
      name: 'posts',
      selector: '.thread > .post',
      multiple: true,
      fields: [
        { name: 'id', selector: ':scope', attr: 'id' },
        {
          name: 'author',
          selector: '.post-author',
          required: true,
          fields: [
            { name: 'name', selector: '.username', required: true },
            { name: 'profile', selector: 'a.username', attr: 'href', type: 'url' },
            { name: 'post_count', selector: '.post-count', type: 'integer' },
          ],
        },
        { name: 'posted_at', selector: '.post-date time', attr: 'datetime', type: 'date', required: true },
        { name: 'paragraphs', selector: '.post-body > p', multiple: true },
        { name: 'quote', selector: '.post-body blockquote', attr: 'html' },
        { name: 'likes', selector: '.likes', attr: 'data-count', type: 'integer' },
      ],
    },
  ]

  test('nested posts and authors; a removed post and an unreadable date are reported with their paths', async () => {
    const { root } = await page('forum-thread.html')
    const skylark = (count: number) => ({ name: 'skylark', profile: 'https://pilots.example/u/skylark', post_count: count })
    expect(extractFields(root, fields, 'https://pilots.example/t/88213')).toEqual({
      data: {
        title: 'Carburettor icing on a Cessna 152?',
        replies: 3,
        posts: [
          {
            id: 'post-1',
            author: skylark(58),
            posted_at: '2023-11-02T19:04:11.000Z',
            paragraphs: ['On my last flight the RPM dropped about 150 during the run-up with carb heat ON & came back slowly.', 'Is that normal? OAT was 8°C, dew point 6°C.'],
            quote: null,
            likes: 4,
          },
          {
            id: 'post-2',
            author: { name: 'old_cfi', profile: 'https://pilots.example/u/old_cfi', post_count: 12731 },
            posted_at: '2023-11-02T20:15:00.000Z',
            paragraphs: ['Perfectly normal: the warm air is less dense. A rise afterwards means you had ice.'],
            quote: '<cite>skylark said:</cite> RPM dropped about 150 during the run-up',
            likes: 19,
          },
          { id: 'post-3', author: { name: 'Guest', profile: null, post_count: null }, posted_at: null, paragraphs: ['This post was removed by a moderator.'], quote: null, likes: null },
          { id: 'post-4', author: skylark(59), posted_at: null, paragraphs: ['Thanks! Makes sense now.'], quote: null, likes: 1 },
        ],
      },
      errors: [
        { field: 'posts[2].posted_at', error: 'required', message: 'no element matches ".post-date time"' },
        {
          field: 'posts[3].posted_at',
          error: 'invalid',
          message: '"yesterday" is not a date (ISO 8601, RFC 2822 or a form like "January 5, 2024" or "5 Jan 2024")',
        },
      ],
    })
  })
})

describe('a windows-1252 page', () => {
  const fields: Field[] = [
    { name: 'title', selector: 'title' },
    { name: 'name', selector: 'h1.name' },
    { name: 'price', selector: '.preis .betrag', type: 'number' },
    { name: 'was', selector: '.alt-preis .betrag', type: 'number' },
    { name: 'available_from', selector: '.lieferung time', attr: 'datetime', type: 'date' },
    { name: 'note', selector: '.hinweis' },
    { name: 'in_stock', selector: '.verfuegbar', attr: 'data-lager', type: 'boolean' },
    {
      name: 'dealer',
      selector: 'a.haendler',
      fields: [
        { name: 'name', selector: ':scope' },
        { name: 'url', selector: ':scope', attr: 'href', type: 'url' },
      ],
    },
  ]

  test('is decoded by its meta charset: curly quotes, dashes, umlauts and the euro sign survive', async () => {
    const { root, charset } = await page('windows-1252.html')
    expect(charset).toBe('windows-1252')
    expect(extractFields(root, fields, 'https://kaffee.example/p/1')).toEqual({
      data: {
        title: 'Kaffeemühle „Bärenstark“ – Müller & Söhne',
        name: 'Kaffeemühle „Bärenstark“ – Edelstahl',
        price: 1234.5,
        was: 1499,
        available_from: '2024-03-18',
        note: 'Größe: 12 × 18 cm … Gewicht: 2,5 kg',
        in_stock: null,
        dealer: { name: 'Müller & Söhne', url: 'https://kaffee.example/haendler/m%C3%BCller' },
      },
      errors: [{ field: 'in_stock', error: 'invalid', message: '"ja" is not a boolean (true, false, yes, no, 1 or 0)' }],
    })
  })
})
