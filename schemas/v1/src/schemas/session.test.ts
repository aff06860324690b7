import { checkSchema } from '../examples/check-schema.js'
import {
  sessionInitRequest,
  sessionInitResult,
  sessionResumeRequest,
  sessionResumeResult,
  variant,
} from '../examples/values.js'

const initRequest = sessionInitRequest()
const initResult = sessionInitResult()

checkSchema(
  'gate.http.session_init.v1',
  [
    { name: 'a full request', value: initRequest },
    { name: 'a minimal request', value: { kind: 'request', protocol_version: '2025-11-25', caller: { subject: 'anonymous', auth_method: { method: 'anonymous' } } } },
    { name: 'an initializing result', value: initResult },
    { name: 'a ready result without expiry', value: variant(initResult, (v) => ((v.state = 'ready'), (v.expires_at = null))) },
    { name: 'a result with an additive member', value: variant(initResult, (v) => (v.server_info = { name: 'gate' })) },
  ],
  [
    { name: 'another protocol version', value: variant(initRequest, (v) => (v.protocol_version = '2025-06-18')), at: '/protocol_version' },
    { name: 'a missing protocol version', value: variant(initRequest, (v) => delete v.protocol_version), at: '(root)' },
    { name: 'a request carrying a session id', value: variant(initRequest, (v) => (v.session_id = 'sess-1')), at: '/session_id' },
    { name: 'a missing caller', value: variant(initRequest, (v) => delete v.caller), at: '(root)' },
    { name: 'an invalid caller', value: variant(initRequest, (v) => (v.caller.subject = '')), at: '/caller/subject' },
    { name: 'duplicate capability ids', value: variant(initRequest, (v) => (v.capability_ids = ['a', 'a'])), at: '/capability_ids' },
    { name: 'client_info without name', value: variant(initRequest, (v) => delete v.client_info.name), at: '/client_info' },
    { name: 'an unknown request member', value: variant(initRequest, (v) => (v.tenant = 'acme')), at: '(root)' },
    { name: 'an unknown kind', value: variant(initRequest, (v) => (v.kind = 'response')), at: '(root)' },
    { name: 'no kind', value: variant(initRequest, (v) => delete v.kind), at: '(root)' },
    { name: 'a draining result', value: variant(initResult, (v) => (v.state = 'draining')), at: '/state' },
    { name: 'a session id with a space', value: variant(initResult, (v) => (v.session_id = 'sess 1')), at: '/session_id' },
    { name: 'an empty session id', value: variant(initResult, (v) => (v.session_id = '')), at: '/session_id' },
    { name: 'a 257-character session id', value: variant(initResult, (v) => (v.session_id = 's'.repeat(257))), at: '/session_id' },
    { name: 'a result without created_at', value: variant(initResult, (v) => delete v.created_at), at: '(root)' },
    { name: 'a result with another protocol version', value: variant(initResult, (v) => (v.protocol_version = '2024-11-05')), at: '/protocol_version' },
  ],
)

const resumeRequest = sessionResumeRequest()
const resumeResult = sessionResumeResult()
const NOT_READY = ['initializing', 'draining', 'deleted', 'expired', 'closed']

checkSchema(
  'gate.http.session_resume.v1',
  [
    { name: 'a request', value: resumeRequest },
    { name: 'a request from sequence 0', value: variant(resumeRequest, (v) => (v.last_event_id = 'sess-0192f0c1-0')) },
    { name: 'a request with the protocol version', value: variant(resumeRequest, (v) => (v.protocol_version = '2025-11-25')) },
    { name: 'a resumed ready session', value: resumeResult },
    ...NOT_READY.map((state) => ({
      name: `a ${state} session that did not resume`,
      value: { kind: 'result', session_id: 'sess-0192f0c1', state, resumed: false },
    })),
  ],
  [
    { name: 'a last event id without sequence', value: variant(resumeRequest, (v) => (v.last_event_id = 'sess-0192f0c1')), at: '/last_event_id' },
    { name: 'a sequence with a leading zero', value: variant(resumeRequest, (v) => (v.last_event_id = 'sess-07')), at: '/last_event_id' },
    { name: 'an empty sequence', value: variant(resumeRequest, (v) => (v.last_event_id = 'sess-')), at: '/last_event_id' },
    { name: 'a missing last event id', value: variant(resumeRequest, (v) => delete v.last_event_id), at: '(root)' },
    { name: 'a missing session id', value: variant(resumeRequest, (v) => delete v.session_id), at: '(root)' },
    { name: 'an unknown request member', value: variant(resumeRequest, (v) => (v.replay = true)), at: '(root)' },
    { name: 'a resumed draining session', value: variant(resumeResult, (v) => (v.state = 'draining')), at: '/state' },
    { name: 'a ready session that did not resume', value: { kind: 'result', session_id: 's', state: 'ready', resumed: false }, at: '/state' },
    { name: 'a resume without next_event_id', value: variant(resumeResult, (v) => delete v.next_event_id), at: '(root)' },
    {
      name: 'a refused resume with next_event_id',
      value: { kind: 'result', session_id: 's', state: 'closed', resumed: false, next_event_id: 's-1' },
      at: '/next_event_id',
    },
    { name: 'an unknown state', value: variant(resumeResult, (v) => (v.state = 'paused')), at: '/state' },
    { name: 'a string resumed', value: { kind: 'result', session_id: 's', state: 'closed', resumed: 'yes' }, at: '/resumed' },
  ],
)
