// Tokens never reach the API Gateway access logs: the realtime token rides in the WebSocket URL's query
// string (and session tokens in a header), so neither access log format may name a query string, a path
// or a header.
import { SHAPES, template } from '../support/shapes';
import { valuesOfType, type StageProps } from './cfn';

test('the HTTP and WebSocket access log formats hold no query string, path or header', async () => {
  expect(SHAPES.AlarmEmailEveryOption.wsAccessLogs).toBe(true);
  const { Resources } = await template('AlarmEmailEveryOption');
  const stages = valuesOfType<StageProps>(Resources, 'AWS::ApiGatewayV2::Stage');
  const formats = stages.map((s) => s.Properties.AccessLogSettings?.Format).filter((f) => f !== undefined);
  expect(formats).toHaveLength(2); // the HTTP API's and the WebSocket API's
  for (const format of formats) {
    expect(Object.keys(JSON.parse(format) as object)).toContain('routeKey');
    expect(format).not.toMatch(/querystring|query|path|header|authoriz|token/i);
  }
});
