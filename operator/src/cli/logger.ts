/** One pino logger for the process; credentials and keys are redacted wherever they could appear. */
import { pino, type Logger } from 'pino'

export function createLogger(env: NodeJS.ProcessEnv, name: string): Logger {
  return pino({
    name,
    level: env.GATEHOUSE_LOG_LEVEL ?? 'info',
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-gateway-api-key"]',
        'req.headers["x-api-key"]',
        '*.credentials',
        '*.apiKey',
        '*.rawKey',
        '*.password',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  })
}
