/** The SCIM filter grammar as IdPs use it, and the PATCH path forms Okta and Entra send. */
import { describe, expect, it } from 'vitest'
import { equalityOn, matches, parseFilter, parsePatchPath, ScimFilterError } from './filter.ts'

const ann = {
  id: 'u-1',
  externalId: 'Ext-1',
  userName: 'Ann@Example.com',
  name: { givenName: 'Ann', familyName: 'Lee' },
  emails: [{ value: 'ann@example.com', type: 'work', primary: true }, { value: 'ann@home.test', type: 'home' }],
  active: true,
  meta: { lastModified: '2030-01-02T00:00:00.000Z' },
}

const test = (filter: string): boolean => matches(parseFilter(filter), ann)

describe('SCIM filters', () => {
  it('compares case-insensitively where RFC 7643 says so, exactly for ids', () => {
    expect(test('userName eq "ann@example.com"')).toBe(true)
    expect(test('USERNAME EQ "ANN@EXAMPLE.COM"')).toBe(true)
    expect(test('externalId eq "ext-1"')).toBe(false)
    expect(test('externalId eq "Ext-1"')).toBe(true)
    expect(test('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "ann@example.com"')).toBe(true)
  })

  it('supports co, sw, ew, ne, pr, gt/lt, and/or/not and grouping', () => {
    expect(test('userName co "@example"')).toBe(true)
    expect(test('userName sw "ann"')).toBe(true)
    expect(test('userName ew ".org"')).toBe(false)
    expect(test('userName ne "bob@example.com"')).toBe(true)
    expect(test('name.givenName pr')).toBe(true)
    expect(test('title pr')).toBe(false)
    expect(test('meta.lastModified gt "2030-01-01T00:00:00.000Z"')).toBe(true)
    expect(test('userName sw "bob" or name.familyName eq "lee"')).toBe(true)
    expect(test('userName sw "ann" and not (active eq true)')).toBe(false)
    expect(test('(userName sw "bob" or userName sw "ann") and active eq true')).toBe(true)
  })

  it('matches any value of a multi-valued attribute, and value paths', () => {
    expect(test('emails co "@home.test"')).toBe(true)
    expect(test('emails.value eq "ann@home.test"')).toBe(true)
    expect(test('emails[type eq "work" and value co "example.com"]')).toBe(true)
    expect(test('emails[type eq "home" and value co "example.com"]')).toBe(false)
  })

  it('reads Entra\'s "True"/"False" strings as the booleans they mean', () => {
    expect(matches(parseFilter('active eq false'), { active: 'False' })).toBe(true)
  })

  it('escapes in strings as JSON reads them', () => {
    expect(matches(parseFilter('displayName eq "say \\"hi\\""'), { displayName: 'say "hi"' })).toBe(true)
  })

  it('refuses what is not a filter', () => {
    for (const bad of ['', 'userName eq', 'userName zz "x"', 'userName eq x', '(userName pr', 'userName eq "x" garbage', 'emails[type eq "work"', '"x" eq userName', 'userName eq "unterminated']) {
      expect(() => parseFilter(bad), bad).toThrow(ScimFilterError)
    }
    expect(() => parseFilter('x '.repeat(3000))).toThrow(/longer/)
    expect(() => parseFilter(`${'('.repeat(40)}a pr${')'.repeat(40)}`)).toThrow(/nested/)
  })

  it('finds the single equality Okta uses before a create', () => {
    expect(equalityOn(parseFilter('userName eq "a@b.c"'), 'userName')).toBe('a@b.c')
    expect(equalityOn(parseFilter('userName eq "a@b.c" and active eq true'), 'userName')).toBeNull()
    expect(equalityOn(parseFilter('userName co "a"'), 'userName')).toBeNull()
  })
})

describe('PATCH paths', () => {
  it('parses plain, dotted, URN-qualified and filtered paths', () => {
    expect(parsePatchPath('active')).toEqual({ attribute: ['active'], filter: null, subAttribute: null })
    expect(parsePatchPath('name.givenName')).toEqual({ attribute: ['name', 'givenname'], filter: null, subAttribute: null })
    const entra = parsePatchPath('emails[type eq "work"].value')
    expect(entra.attribute).toEqual(['emails'])
    expect(entra.subAttribute).toBe('value')
    expect(matches(entra.filter!, { type: 'work' })).toBe(true)
    const okta = parsePatchPath('members[value eq "u-1"]')
    expect(matches(okta.filter!, { value: 'u-1' })).toBe(true)
    expect(matches(okta.filter!, { value: 'U-1' })).toBe(false)
    expect(parsePatchPath('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department').attribute).toEqual(['department'])
  })

  it('refuses broken paths', () => {
    expect(() => parsePatchPath('members[value eq "x"')).toThrow(ScimFilterError)
    expect(() => parsePatchPath('members[value eq "x"]junk')).toThrow(ScimFilterError)
    expect(() => parsePatchPath('na me')).toThrow(ScimFilterError)
  })
})
