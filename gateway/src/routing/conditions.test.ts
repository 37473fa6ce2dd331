import { describe, expect, it } from 'vitest'
import { compileQuery, type ConditionInput } from './conditions.ts'
import type { ConditionQuery } from '../snapshot/config-schema.ts'

const input: ConditionInput = {
  metadata: { team: 'search', tier: 3, region: 'eu-west-1', nested: { plan: 'pro' } },
  params: { model: 'gpt-4o-mini', temperature: 0.2, max_tokens: 500, stream: true },
}
const matches = (query: ConditionQuery): boolean => compileQuery(query)(input)

describe('conditions', () => {
  it.each<[string, ConditionQuery, boolean]>([
    ['$eq on metadata', { 'metadata.team': { $eq: 'search' } }, true],
    ['a bare value is $eq', { 'metadata.team': 'ads' }, false],
    ['$ne', { 'metadata.team': { $ne: 'ads' } }, true],
    ['$in', { 'metadata.team': { $in: ['ads', 'search'] } }, true],
    ['$nin', { model: { $nin: ['gpt-4o-mini'] } }, false],
    ['$gt on a number', { 'metadata.tier': { $gt: 2 } }, true],
    ['$gte on the bound', { 'metadata.tier': { $gte: 3 } }, true],
    ['$lt', { 'params.temperature': { $lt: 0.2 } }, false],
    ['$lte on the bound', { 'params.max_tokens': { $lte: 500 } }, true],
    ['ordering never mixes types', { 'metadata.team': { $gt: 1 } }, false],
    ['ordering of strings', { 'metadata.region': { $gte: 'eu' } }, true],
    ['$regex', { model: { $regex: '^gpt-4o' } }, true],
    ['$regex on a non-string', { 'metadata.tier': { $regex: '3' } }, false],
    ['a nested field', { 'metadata.nested.plan': 'pro' }, true],
    ['a missing field', { 'metadata.absent': { $eq: 'x' } }, false],
    ['boolean params', { 'params.stream': true }, true],
    ['several fields are ANDed', { 'metadata.team': 'search', model: 'gpt-4o' }, false],
    ['several operators are ANDed', { 'metadata.tier': { $gt: 1, $lt: 3 } }, false],
    ['$and', { $and: [{ 'metadata.team': 'search' }, { 'metadata.tier': { $gte: 3 } }] }, true],
    ['$or', { $or: [{ 'metadata.team': 'ads' }, { model: { $regex: 'mini$' } }] }, true],
    ['$or of nothing true', { $or: [{ 'metadata.team': 'ads' }, { model: 'o3' }] }, false],
  ])('%s', (_name, query, expected) => {
    expect(matches(query)).toBe(expected)
  })
})
