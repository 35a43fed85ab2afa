/**
 * The run loop's sleep, cut short by `poke` when something happens (a page finished, a commit
 * landed, a robots.txt loaded). A poke while the loop is awake is kept for its next sleep, which
 * then returns at once: the loop may have looked at its slots just before the commit freed them.
 */
export class Waker {
  private wake: (() => void) | null = null
  private poked = false

  sleep(ms: number): Promise<void> {
    if (this.poked) {
      this.poked = false
      // Through the event loop all the same: what finished meanwhile (I/O, timers) gets its turn.
      return new Promise((resolve) => setImmediate(resolve))
    }
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined = undefined
      const done = () => {
        clearTimeout(timer)
        if (this.wake === done) this.wake = null
        resolve()
      }
      timer = setTimeout(done, ms)
      this.wake = done
    })
  }

  poke() {
    const wake = this.wake
    this.wake = null
    if (wake) wake()
    else this.poked = true
  }
}
