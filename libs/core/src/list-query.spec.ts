import { type ApiError } from './errors.js';
import { MAX_LIST_OFFSET, orderBy, pagination, parseListQuery, type ListSpec } from './list-query.js';

// Contract §1.5: list endpoints.
const spec: ListSpec<'createdAt' | 'status'> = {
  sort: ['createdAt', 'status'],
  defaultSort: 'createdAt',
  sets: { status: ['queued', 'done', 'failed'], templateId: { pattern: /^tpl_[0-9A-Z]{26}$/, describe: 'template ids (tpl_…)' } },
  dates: ['created'],
  booleans: ['isActive'],
  search: { maxLength: 128 },
};

function refusal(query: Record<string, unknown>, s: ListSpec = spec): ApiError {
  try {
    parseListQuery(s, query);
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected a refusal');
}

describe('parseListQuery (§1.5)', () => {
  it('applies the defaults: page 1, limit 20, the endpoint default sort, desc', () => {
    expect(parseListQuery(spec, {})).toMatchObject({ page: 1, limit: 20, offset: 0, sort: 'createdAt', order: 'desc' });
  });

  it('honours an endpoint limit default and maximum', () => {
    const webhooks = { ...spec, limit: { default: 50, max: 100 } };
    expect(parseListQuery(webhooks, {}).limit).toBe(50);
    expect(refusal({ limit: '101' }, webhooks).message).toMatch(/1 to 100/);
  });

  it('refuses limit above 100, zero, negatives and non-numbers', () => {
    for (const limit of ['101', '0', '-1', 'ten', '2.5']) {
      const err = refusal({ limit });
      expect(err.code).toBe('INVALID_LIST_QUERY');
      expect(err.status).toBe(422);
      expect(err.extras.errors).toHaveProperty(['query.limit']);
    }
  });

  it('refuses an unknown sort column naming the allowed ones', () => {
    const err = refusal({ sort: 'password' });
    expect(err.message).toContain('Allowed: createdAt, status');
    expect(err.extras.errors?.['query.sort']?.[0]).toContain('password');
  });

  it('refuses an unknown order', () => {
    expect(refusal({ order: 'up' }).message).toContain('asc, desc');
  });

  it('accepts comma-separated set filters and refuses values outside the set', () => {
    expect(parseListQuery(spec, { status: 'queued, done' }).sets.status).toEqual(['queued', 'done']);
    const err = refusal({ status: 'done,exploded' });
    expect(err.message).toContain('"exploded"');
    expect(err.message).toContain('queued, done, failed');
  });

  it('checks open sets by pattern', () => {
    const id = 'tpl_01JD3Q4Z5X6Y7W8V9T0S1R2Q3P';
    expect(parseListQuery(spec, { templateId: id }).sets.templateId).toEqual([id]);
    expect(refusal({ templateId: 'x' }).message).toContain('template ids');
  });

  it('parses date pairs; a date-only upper bound covers its whole day; from after to is refused', () => {
    const q = parseListQuery(spec, { createdFrom: '2026-01-01', createdTo: '2026-01-31' });
    expect(q.dates.created.from?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(q.dates.created.to?.toISOString()).toBe('2026-01-31T23:59:59.999Z');
    expect(parseListQuery(spec, { createdFrom: '2026-01-01T10:00:00+02:00' }).dates.created.from?.toISOString()).toBe('2026-01-01T08:00:00.000Z');
    expect(refusal({ createdFrom: '2026-02-30' }).extras.errors).toHaveProperty(['query.createdFrom']);
    expect(refusal({ createdFrom: 'yesterday' }).code).toBe('INVALID_LIST_QUERY');
    expect(refusal({ createdFrom: '2026-02-01', createdTo: '2026-01-01' }).message).toMatch(/must not be after/);
  });

  it('refuses an offset beyond 100,000 and asks for a narrower query', () => {
    expect(parseListQuery(spec, { page: '1001', limit: '100' }).offset).toBe(MAX_LIST_OFFSET);
    const err = refusal({ page: '1002', limit: '100' });
    expect(err.message).toMatch(/narrow/);
  });

  it('refuses unknown parameters naming the allowed ones', () => {
    const err = refusal({ colour: 'red' });
    expect(err.message).toContain('colour');
    expect(err.message).toContain('createdFrom');
  });

  it('refuses a parameter given twice, booleans other than true/false, and long searches', () => {
    expect(refusal({ status: ['done', 'failed'] }).extras.errors).toHaveProperty(['query.status']);
    expect(refusal({ isActive: 'yes' }).extras.errors).toHaveProperty(['query.isActive']);
    expect(parseListQuery(spec, { isActive: 'false' }).booleans.isActive).toBe(false);
    expect(refusal({ search: 'x'.repeat(129) }).extras.errors).toHaveProperty(['query.search']);
    expect(parseListQuery(spec, { search: '  cat ' }).search).toBe('cat');
  });

  it('collects every problem into one answer', () => {
    const err = refusal({ sort: 'x', order: 'y', limit: '0' });
    expect(Object.keys(err.extras.errors ?? {}).sort()).toEqual(['query.limit', 'query.order', 'query.sort']);
  });

  it('always tiebreaks ordering by id in the same direction', () => {
    expect(orderBy({ sort: 'createdAt', order: 'asc' })).toEqual({ createdAt: 'asc', id: 'asc' });
    expect(Object.keys(orderBy({ sort: 'status', order: 'desc' }))).toEqual(['status', 'id']);
  });

  it('builds the pagination object', () => {
    expect(pagination({ page: 2, limit: 20 }, 41)).toEqual({ page: 2, limit: 20, total: 41, totalPages: 3 });
    expect(pagination({ page: 1, limit: 20 }, 0)).toEqual({ page: 1, limit: 20, total: 0, totalPages: 0 });
  });
});
