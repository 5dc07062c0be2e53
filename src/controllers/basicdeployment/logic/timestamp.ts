// The runtime's timestamp reading, re-exported for the pure logic of this controller.
export { type Timestamp, toMillis } from '../../../runtime/time.ts';
