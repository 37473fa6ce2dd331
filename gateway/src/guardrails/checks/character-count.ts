/** `default.characterCount`: the number of characters (Unicode code points) lies within minCharacters (0) .. maxCharacters (9999999). */
import { defineCountCheck } from './range.ts'

function codePoints(text: string): number {
  let count = 0
  // Iterating a string walks code points: a surrogate pair is one character.
  for (const _character of text) count++
  return count
}

export const characterCount = defineCountCheck('default.characterCount', 'Characters', 9_999_999, codePoints)
