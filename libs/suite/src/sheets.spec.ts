import { OffloadPool, offloadTask } from './offload.js';
import { readValues, valuesAnswer } from './sheets.js';

const task = offloadTask(new URL('./sheets.js', import.meta.url).href, valuesAnswer);
const envelope = { success: true, message: 'OK' };
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('a values.get answer read (docs/suite.md "Reading rows")', () => {
  const grid = [['Name', '', 'Name', 'Age'], ['Ann', 'x', 'Annie', '30', 'extra'], [], ['Bob']];

  it('records: empty and repeated headers named, ragged rows padded with null, empty rows left out', () => {
    expect(readValues(bytes({ range: "'Sheet1'!A1:E4", values: grid }), { range: 'Sheet1', as: 'records' })).toEqual({
      range: "'Sheet1'!A1:E4",
      headers: ['Name', 'B', 'Name_2', 'Age', 'E'],
      records: [{ Name: 'Ann', B: 'x', Name_2: 'Annie', Age: '30', E: 'extra' }, { Name: 'Bob', B: null, Name_2: null, Age: null, E: null }],
    });
  });

  it('values: the grid as Google sent it; no values at all is an empty grid under the asked range', () => {
    expect(readValues(bytes({ range: 'S!A1:B2', values: [['a'], ['b', 1]] }), { range: 'S', as: 'values' })).toEqual({ range: 'S!A1:B2', values: [['a'], ['b', 1]] });
    expect(readValues(bytes({}), { range: 'Sheet1', as: 'records' })).toEqual({ range: 'Sheet1', headers: [], records: [] });
  });

  it('an answer that is not a ValueRange is garbled, named', () => {
    for (const [body, why] of [['not json', 'something that is not JSON'], ['[1]', 'something that is not JSON'], ['null', 'something that is not JSON'], ['{"values":[1,2]}', 'values that are not rows of cells'], ['{"values":"a"}', 'values that are not rows of cells']] as const) {
      expect(readValues(Buffer.from(body), { range: 'S', as: 'records' })).toEqual({ garbled: why });
    }
  });

  it('the route\'s answer is the envelope around the read, byte for byte what JSON.stringify makes', () => {
    const made = valuesAnswer(bytes({ range: 'S!A1:D4', values: grid }), { range: 'S', as: 'records', envelope });
    expect('body' in made && JSON.parse(Buffer.from(made.body).toString())).toEqual({ ...envelope, data: readValues(bytes({ range: 'S!A1:D4', values: grid }), { range: 'S', as: 'records' }) });
  });

  it('on an offload thread (loaded from the sources): the same bytes as inline, garbled answers too', async () => {
    const pool = new OffloadPool({ threads: 1 });
    try {
      const rows = [['Name', 'Email', 'Score'], ...Array.from({ length: 5000 }, (_, i) => [`Person ${i}`, `p${i}@example.com`, String(i / 10)])];
      const answer = bytes({ range: "'Sheet1'!A1:C5001", majorDimension: 'ROWS', values: rows });
      const inline = valuesAnswer(answer, { range: 'Sheet1', as: 'records', envelope });
      const threaded = await pool.run(task, Buffer.from(answer), { range: 'Sheet1', as: 'records', envelope });
      expect('body' in threaded && Buffer.from(threaded.body).equals(Buffer.from((inline as { body: Uint8Array }).body))).toBe(true);
      expect(await pool.run(task, Buffer.from('{"values":{}}'), { range: 'Sheet1', as: 'values', envelope })).toEqual({ garbled: 'values that are not rows of cells' });
    } finally {
      await pool.close();
    }
  });
});
