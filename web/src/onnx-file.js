// SPDX-License-Identifier: Apache-2.0
// The page's own-model box: a dropped or chosen .onnx file goes to the worker, which loads it
// with loadOnnx; the options come from two boxes: the bucket dim ('' = the only symbol left) and
// "name=value" pairs that fix the other symbols. The bytes are kept for "Load again" (with other
// options).

/** "batch=1, heads=4" -> {batch: 1, heads: 4}; throws with the offending part. */
export function parseFix(text) {
  const fix = {};
  for (const part of text.split(/[,\s]+/).filter(Boolean)) {
    const m = /^([^=]+)=(\d+)$/.exec(part);
    if (!m) throw new Error(`Fix: '${part}' is not name=value (a whole number), e.g. batch=1`);
    fix[m[1]] = Number(m[2]);
  }
  return fix;
}

/**
 * Wires the .onnx controls. `worker` gets {type: 'load-onnx'} messages; `onLoaded(m)` is called
 * with the worker's 'onnx-loaded' message of the latest load. Returns {onMessage(m)} for the
 * worker's 'onnx-loaded' and 'onnx-error' messages.
 */
export function initOnnxFile({ worker, onLoaded }) {
  const $ = (id) => document.getElementById(id);
  const status = $('onnx-status');
  const st = { bytes: null, fileName: '', loadId: 0 };
  const say = (text, kind) => {
    status.textContent = text;
    status.className = kind ? `hint ${kind}` : 'hint';
  };

  function load() {
    if (!st.bytes) return;
    let fix;
    try {
      fix = parseFix($('onnx-fix').value);
    } catch (e) {
      say(e.message, 'error');
      return;
    }
    const options = { fix };
    const bucketDim = $('onnx-bucket-dim').value.trim();
    if (bucketDim) options.bucketDim = bucketDim;
    st.loadId++;
    say(`Loading ${st.fileName}…`);
    // A copy: the buffer is transferred, and "Load again" needs the bytes.
    const bytes = st.bytes.slice(0);
    worker.postMessage({ type: 'load-onnx', loadId: st.loadId, fileName: st.fileName, bytes, options }, [bytes]);
  }

  async function take(file) {
    if (!file) return;
    if (!/\.onnx$/i.test(file.name)) {
      say(`${file.name}: not an .onnx file (the demo takes ONNX models; export one with torch.onnx.export)`, 'error');
      return;
    }
    st.bytes = await file.arrayBuffer();
    st.fileName = file.name;
    $('onnx-reload').disabled = false;
    load();
  }

  function onMessage(m) {
    if (m.loadId !== st.loadId) return;
    if (m.type === 'onnx-error') {
      say(m.message, 'error');
      return;
    }
    $('onnx-choice-name').textContent = m.fileName;
    $('onnx-choice').hidden = false;
    say(`Loaded ${m.fileName}, bucketed on '${m.bucketDim}'.`, 'ok');
    onLoaded(m);
  }

  $('onnx-file').addEventListener('change', (ev) => take(ev.target.files[0]));
  $('onnx-reload').addEventListener('click', load);
  const drop = $('onnx-drop');
  drop.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    take(ev.dataTransfer.files[0]);
  });
  return { onMessage };
}
