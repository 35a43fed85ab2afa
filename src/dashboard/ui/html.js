// htm's tagged templates over preact's h: the dashboard's JSX, with no build step.
import { h } from 'preact'
import htm from 'htm'

export const html = htm.bind(h)
export { render, Fragment } from 'preact'
export { useState, useEffect, useRef, useCallback, useMemo } from 'preact/hooks'
