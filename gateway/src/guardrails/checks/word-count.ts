/** `default.wordCount`: the number of words lies within minWords (0) .. maxWords (99999). */
import { defineCountCheck } from './range.ts'

export function countWords(text: string): number {
  const words = text.trim().split(/\s+/)
  return words[0] === '' ? 0 : words.length
}

export const wordCount = defineCountCheck('default.wordCount', 'Words', 99_999, countWords)
