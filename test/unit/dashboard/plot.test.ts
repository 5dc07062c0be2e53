import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import { lineChart } from '../../../scripts/plot/line-chart.ts';
import { crc32, Raster } from '../../../scripts/plot/png.ts';

/** The chunks of a PNG, each CRC checked. */
function chunks(png: Buffer): Array<{ type: string; data: Buffer }> {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const out: Array<{ type: string; data: Buffer }> = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const body = png.subarray(at + 4, at + 8 + length);
    assert.equal(png.readUInt32BE(at + 8 + length), crc32(body), 'chunk CRC');
    out.push({ type: body.subarray(0, 4).toString('ascii'), data: body.subarray(4) });
    at += 12 + length;
  }
  return out;
}

describe('PNG encoder', () => {
  it('computes the CRC-32 of the check value', () => {
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  });

  it('writes IHDR, the pixels row by row after a filter byte, and IEND', () => {
    const raster = new Raster(3, 2, [255, 255, 255]);
    raster.set(1, 0, [10, 20, 30]);
    raster.set(2, 1, [1, 2, 3]);
    const parts = chunks(raster.png());
    assert.deepEqual(
      parts.map((p) => p.type),
      ['IHDR', 'IDAT', 'IEND'],
    );
    const header = parts[0]?.data ?? Buffer.alloc(0);
    assert.equal(header.readUInt32BE(0), 3);
    assert.equal(header.readUInt32BE(4), 2);
    assert.deepEqual([...header.subarray(8)], [8, 2, 0, 0, 0]);
    const raw = inflateSync(parts[1]?.data ?? Buffer.alloc(0));
    assert.deepEqual(
      [...raw],
      [0, 255, 255, 255, 10, 20, 30, 255, 255, 255, 0, 255, 255, 255, 255, 255, 255, 1, 2, 3],
    );
  });

  it('draws a line chart of the requested size', () => {
    const png = lineChart(
      [
        {
          points: [
            [0, 0],
            [10, 2],
            [20, 1],
          ],
          colour: [255, 0, 0],
        },
        {
          points: [
            [0, 1],
            [20, 3],
          ],
          colour: [0, 0, 255],
        },
      ],
      200,
      100,
    );
    const header = chunks(png)[0]?.data ?? Buffer.alloc(0);
    assert.equal(header.readUInt32BE(0), 200);
    assert.equal(header.readUInt32BE(4), 100);
    const raw = inflateSync(chunks(png)[1]?.data ?? Buffer.alloc(0));
    assert.ok(raw.includes(Buffer.from([255, 0, 0])), 'the red series is drawn');
    assert.ok(raw.includes(Buffer.from([0, 0, 255])), 'the blue series is drawn');
  });
});
