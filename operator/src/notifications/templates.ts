/**
 * The text of each notification kind, as Mustache templates (plain text: no HTML escaping).
 * Values are filled in by the worker that records the notification, so what was sent is stored
 * with it exactly as sent.
 */
import Mustache from 'mustache'
import type { NotificationKind } from '../store/index.ts'

interface Template {
  subject: string
  text: string
}

const TEMPLATES: Record<NotificationKind, Template> = {
  usage_threshold: {
    subject: 'Gatehouse: {{{owner}}} has used {{{usage}}} of its {{{creditLimit}}} {{{unit}}} usage limit',
    text: [
      'The usage limit of {{{owner}}} has passed its alert threshold.',
      '',
      'Used: {{{usage}}} {{{unit}}}',
      'Alert threshold: {{{threshold}}} {{{unit}}}',
      'Credit limit: {{{creditLimit}}} {{{unit}}}',
      '{{#resetsAt}}The limit resets at {{{resetsAt}}}.{{/resetsAt}}{{^resetsAt}}The limit does not reset on its own; raise it to keep serving once it is reached.{{/resetsAt}}',
      '',
    ].join('\n'),
  },
  usage_exhausted: {
    subject: 'Gatehouse: {{{owner}}} has exhausted its {{{creditLimit}}} {{{unit}}} usage limit',
    text: [
      'The usage limit of {{{owner}}} is exhausted: requests under it are refused (412 budget_exhausted).',
      '',
      'Used: {{{usage}}} {{{unit}}}',
      'Credit limit: {{{creditLimit}}} {{{unit}}}',
      '{{#resetsAt}}Requests are served again when the limit resets at {{{resetsAt}}}, or as soon as the credit limit is raised.{{/resetsAt}}{{^resetsAt}}Requests are served again as soon as the credit limit is raised.{{/resetsAt}}',
      '',
    ].join('\n'),
  },
  key_rotation_upcoming: {
    subject: 'Gatehouse: API key {{{keyName}}} will be rotated on {{{rotatesAt}}}',
    text: [
      'The API key {{{keyName}}} ({{{keyHint}}}) is scheduled for rotation at {{{rotatesAt}}}.',
      'After the rotation the current secret stays valid for {{{transitionMinutes}}} minutes; replace it with the new key within that time.',
      '',
    ].join('\n'),
  },
  key_rotation_completed: {
    subject: 'Gatehouse: API key {{{keyName}}} was rotated',
    text: [
      'The API key {{{keyName}}} was rotated at {{{rotatedAt}}}; its new secret ends in {{{keyHint}}}.',
      '{{#previousValidUntil}}The previous secret stays valid until {{{previousValidUntil}}}.{{/previousValidUntil}}',
      'The new secret is not sent by e-mail: retrieve it where the rotation was made, or rotate again.',
      '',
    ].join('\n'),
  },
  key_expiry_warning: {
    subject: 'Gatehouse: API key {{{keyName}}} expires on {{{expiresAt}}}',
    text: [
      'The API key {{{keyName}}} ({{{keyHint}}}) expires at {{{expiresAt}}}. Requests with it are refused after that.',
      'Create a new key, or extend this one, before then.',
      '',
    ].join('\n'),
  },
}

export function renderNotification(kind: NotificationKind, view: Record<string, unknown>): { subject: string; text: string } {
  const template = TEMPLATES[kind]
  return { subject: Mustache.render(template.subject, view), text: Mustache.render(template.text, view) }
}
