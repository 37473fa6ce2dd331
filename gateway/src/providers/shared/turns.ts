/**
 * Conversation turns for providers that want user and assistant turns to alternate (Anthropic,
 * Bedrock Converse): blocks pushed under the same role as the previous turn join that turn, so
 * consecutive tool results, or a tool result followed by user text, become one user turn.
 */
export type TurnRole = 'user' | 'assistant'

export interface Turn<Block> {
  role: TurnRole
  blocks: Block[]
}

export class TurnBuilder<Block> {
  readonly turns: Array<Turn<Block>> = []

  /** Adds blocks to the conversation; a push with no blocks adds no turn. */
  push(role: TurnRole, blocks: readonly Block[]): void {
    if (blocks.length === 0) return
    const last = this.turns.at(-1)
    if (last?.role === role) last.blocks.push(...blocks)
    else this.turns.push({ role, blocks: [...blocks] })
  }
}
