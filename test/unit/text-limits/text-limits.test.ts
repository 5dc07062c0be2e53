import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  codePointCount,
  cutToBytes,
  cutToCharacters,
  firstUtf8Bytes,
  fitsCharacters,
} from '../../../src/runtime/text-limits.ts';

const codePoints = (text: string): number => [...text].length;

describe('cutToCharacters', () => {
  it('keeps text up to the limit as it is', () => {
    assert.equal(cutToCharacters('short', 5), 'short');
    assert.equal(cutToCharacters('😀'.repeat(10), 10), '😀'.repeat(10)); // 20 UTF-16 units, 10 characters
  });

  it('cuts longer text to exactly the limit, ending in how much was cut', () => {
    const text = 'x'.repeat(40 * 1024); // a webhook's 40 KiB refusal
    const cut = cutToCharacters(text, 32768);
    assert.equal(codePoints(cut), 32768);
    const kept = cut.indexOf('...');
    assert.equal(cut.slice(kept), `... (${text.length - kept} more characters)`);
    assert.equal(cut.slice(0, kept), text.slice(0, kept));
  });

  it('never splits a character, and counts characters, not UTF-16 units', () => {
    const cut = cutToCharacters('😀'.repeat(100), 50);
    assert.equal(codePoints(cut), 50);
    assert.match(cut, /^(😀)+\.\.\. \(\d+ more characters\)$/);
    const kept = codePoints(cut.slice(0, cut.indexOf('...')));
    assert.equal(kept + Number(/\((\d+) more/.exec(cut)?.[1]), 100);
  });

  it('cuts without a marker when the limit leaves no room for one', () => {
    assert.equal(cutToCharacters('abcdefghij', 4), 'abcd');
  });
});

describe('codePointCount and fitsCharacters', () => {
  it('count code points as for...of does: a pair is one, a lone surrogate is one', () => {
    for (const text of [
      '',
      'abc',
      '😀',
      'a😀b😀',
      '\ud83d',
      '\ude00x',
      'x\ud83d',
      '\ude00\ud83d',
      '😀'.repeat(1000),
    ]) {
      assert.equal(codePointCount(text), codePoints(text), JSON.stringify(text.slice(0, 8)));
    }
  });

  it('fit by characters, not UTF-16 units', () => {
    assert.equal(fitsCharacters('😀'.repeat(10), 10), true);
    assert.equal(fitsCharacters('😀'.repeat(11), 10), false);
    assert.equal(fitsCharacters('x'.repeat(10), 10), true);
    assert.equal(fitsCharacters('x'.repeat(11), 10), false);
  });

  it('cut a text with a lone surrogate where for...of would', () => {
    const text = `${'\ud83d'.repeat(3)}${'😀'.repeat(3)}`;
    const cut = cutToCharacters(text, 4);
    assert.equal(cut, text.slice(0, 5));
  });
});

describe('cutToBytes', () => {
  it('keeps text up to the limit as it is', () => {
    assert.equal(cutToBytes('x'.repeat(1024), 1024), 'x'.repeat(1024));
  });

  it('cuts longer text to at most the limit in UTF-8, ending in how much was cut', () => {
    const cut = cutToBytes('n'.repeat(3000), 1024);
    assert.equal(Buffer.byteLength(cut), 1024);
    assert.match(cut, /^n+\.\.\. \(1997 more bytes\)$/);
    assert.equal(cut.indexOf('...') + 1997, 3000);
  });

  it('never splits a multi-byte character', () => {
    const cut = cutToBytes('€'.repeat(1000), 1024); // 3 bytes each
    assert.ok(Buffer.byteLength(cut) <= 1024);
    const kept = cut.slice(0, cut.indexOf('...'));
    assert.equal(kept, '€'.repeat(kept.length));
    assert.equal(Buffer.byteLength(kept) + Number(/\((\d+) more/.exec(cut)?.[1]), 3000);
  });

  it('cuts without a marker when the limit leaves no room for one', () => {
    assert.equal(cutToBytes('abcdefghij', 4), 'abcd');
  });
});

describe('firstUtf8Bytes', () => {
  it('keeps whole characters only', () => {
    assert.equal(firstUtf8Bytes('a€b', 3), 'a');
    assert.equal(firstUtf8Bytes('a€b', 4), 'a€');
  });
});
