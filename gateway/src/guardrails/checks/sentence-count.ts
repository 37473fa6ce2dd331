/** `default.sentenceCount`: the number of sentences (runs ending in . ! or ?) lies within minSentences (0) .. maxSentences (99999). */
import { defineCountCheck } from './range.ts'

const TERMINATORS = new Set(['.', '!', '?'])

/** One pass (a regex here would backtrack on long text without punctuation). */
export function countSentences(text: string): number {
  let count = 0
  let content = false
  for (const character of text) {
    if (TERMINATORS.has(character)) {
      if (content) count++
      content = false
    } else if (character.trim() !== '') {
      content = true
    }
  }
  return count
}

export const sentenceCount = defineCountCheck('default.sentenceCount', 'Sentences', 99_999, countSentences)
