/** Runs a job every `intervalMs`, never two runs at once; returns the stop function. */
export type WorkerErrorHandler = (error: unknown) => void

export function startInterval(job: () => Promise<unknown>, intervalMs: number, onError: WorkerErrorHandler = () => {}): () => void {
  let running = false
  const timer = setInterval(() => {
    if (running) return
    running = true
    job().catch(onError).finally(() => {
      running = false
    })
  }, intervalMs)
  timer.unref()
  return () => clearInterval(timer)
}
