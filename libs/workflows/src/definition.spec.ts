import { ApiError } from '#libs/core';
import { PLANS } from '#libs/workspaces';
import { cellRange, checkColumns, checkDefinition, checkStepCeiling, normaliseSteps, sheetRows, sourceRange, type WorkflowDefinition } from './definition.js';

// docs/workflows.md "Rules": what a definition can be refused for without the template, the sheet or a provider.

const FIELDS = [{ key: 'NAME', required: true, hasDefault: false }, { key: 'PHOTO', required: true, hasDefault: true }];
const sheet = { type: 'sheet' as const, spreadsheetId: 'abc_123', tab: 'My tab', headerRow: 2 };
const def = (over: Partial<WorkflowDefinition> = {}): WorkflowDefinition => ({ source: sheet, templateId: 'tpl_1', mapping: { NAME: 'Name' }, steps: [], ...over });

function errorsOf(work: () => void): Record<string, string[]> {
  try {
    work();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return (err as ApiError).extras.errors ?? {};
  }
  throw new Error('expected a refusal');
}

describe('workflow definitions', () => {
  it('maps template fields only, and every required field without a default', () => {
    expect(() => checkDefinition(def(), FIELDS)).not.toThrow();
    expect(Object.keys(errorsOf(() => checkDefinition(def({ mapping: {} }), FIELDS)))).toEqual(['mapping.NAME']);
    expect(Object.keys(errorsOf(() => checkDefinition(def({ mapping: { NAME: 'Name', TITLE: 'T' } }), FIELDS)))).toEqual(['mapping.TITLE']);
  });

  it('checks each step by its type', () => {
    const errors = errorsOf(() => checkDefinition(def({
      source: { type: 'rows' },
      steps: [
        { type: 'writeBack', column: 'Link' },
        { type: 'message', channel: 'primary_chat', to: 'Phone' },
        { type: 'message', channel: 'email', to: 'Email', messageType: 'text', variables: { one: 'Name' } },
        { type: 'upload', folderId: 'no/slashes' },
      ],
    }), FIELDS));
    expect(Object.keys(errors).sort()).toEqual(['steps[0].type', 'steps[1].templateName', 'steps[2].subject', 'steps[2].text', 'steps[2].variables.one', 'steps[3].folderId']);
  });

  it('stores a step\'s own fields only; another type\'s field is refused by path', () => {
    expect(normaliseSteps([{ type: 'upload' }, { type: 'writeBack', column: 'Link', caption: undefined }])).toEqual([{ type: 'upload', folderId: null }, { type: 'writeBack', column: 'Link' }]);
    expect(Object.keys(errorsOf(() => normaliseSteps([{ type: 'writeBack', column: 'Link', folderId: 'f' }, { type: 'upload', to: 'Phone' }])))).toEqual(['steps[0].folderId', 'steps[1].to']);
  });

  it('counts the render and each step against the plan (pro: 20)', () => {
    const steps = (n: number) => Array.from({ length: n }, () => ({ type: 'upload' as const, folderId: null }));
    expect(() => checkStepCeiling(PLANS.pro, { steps: steps(19) })).not.toThrow();
    expect(() => checkStepCeiling(PLANS.pro, { steps: steps(20) })).toThrow(expect.objectContaining({ code: 'LIMIT_WORKFLOWMAXSTEPS' }));
    expect(() => checkStepCeiling(PLANS.free, { steps: [] })).toThrow(expect.objectContaining({ code: 'LIMIT_WORKFLOWMAXSTEPS' }));
  });

  it('reads rows below the header row with their sheet lines, skipping empty ones', () => {
    const { headers, rows } = sheetRows([['Name', '', 'Name'], ['Ada', 'x', 'A'], [], ['', null], ['Bob']], 2);
    expect(headers).toEqual(['Name', 'B', 'Name_2']);
    expect(rows).toEqual([
      { sheetRow: 3, values: { Name: 'Ada', B: 'x', Name_2: 'A' } },
      { sheetRow: 6, values: { Name: 'Bob', B: null, Name_2: null } },
    ]);
  });

  it('refuses columns the live header row lacks, naming each path', () => {
    const d = def({ steps: [{ type: 'writeBack', column: 'Link' }, { type: 'message', channel: 'sms', to: 'Phone', variables: { 1: 'Code' } }] });
    expect(() => checkColumns(d, ['Name', 'Link', 'Phone', 'Code'], 'the sheet')).not.toThrow();
    expect(errorsOf(() => checkColumns(d, ['Name', 'Phone'], 'the sheet'))).toEqual({
      'steps[0].column': ['column "Link" is not in the sheet ("Name", "Phone")'],
      'steps[1].variables.1': ['column "Code" is not in the sheet ("Name", "Phone")'],
    });
  });

  it('writes A1 ranges with the tab quoted', () => {
    expect(sourceRange(sheet)).toBe("'My tab'!A2:ZZZ");
    expect(sourceRange(sheet, true)).toBe("'My tab'!A2:ZZZ2");
    expect(cellRange(sheet, ['Name', 'Phone', 'Link'], 'Link', 7)).toBe("'My tab'!C7");
  });
});
