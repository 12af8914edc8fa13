//! The `tracegate._native` extension module: tracegate's monitor and checker for
//! Python. Records and diagnostics cross the boundary as plain dicts; diagnostics are
//! the rows of the JSON Lines contract, rendered by the library's own JSON renderer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Value};
use tracegate::check::{CheckOptions, Monitor as Engine};
use tracegate::diagnostic::render::{FileResolver, human, json};
use tracegate::diagnostic::{Code, Diagnostic, TraceSite};
use tracegate::machine::Machine;
use tracegate::runtime;
use tracegate::trace::adapters::{Format, InputOptions, Selector};
use tracegate::trace::{Location, Record};

create_exception!(
    _native,
    SpecError,
    PyException,
    "A spec did not compile (or was not found). `diagnostics` holds every error as a row of the JSON Lines contract."
);

/// What a monitor's diagnostics name as their file: records fed at run time have none.
const RUNTIME_FILE: &str = "<runtime>";

/// How deep a record may nest: the most tracegate's native reader accepts.
const MAX_DEPTH: usize = 127;

// --- Python values <-> JSON values ------------------------------------------------------

fn to_json(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "record nests deeper than {MAX_DEPTH} levels"
        )));
    }
    if value.is_none() {
        return Ok(Value::Null);
    }
    // `bool` before `int`: in Python a bool is an int.
    if let Ok(flag) = value.downcast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(text) = value.downcast::<PyString>() {
        return Ok(Value::String(text.to_str()?.to_owned()));
    }
    if let Ok(int) = value.downcast::<PyInt>() {
        if let Ok(n) = int.extract::<i64>() {
            return Ok(Value::from(n));
        }
        if let Ok(n) = int.extract::<u64>() {
            return Ok(Value::from(n));
        }
        return Err(PyValueError::new_err(format!(
            "integer {int} does not fit in 64 bits"
        )));
    }
    if let Ok(float) = value.downcast::<PyFloat>() {
        let n = float.value();
        return serde_json::Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err(format!("{n} is not a JSON number")));
    }
    if let Ok(dict) = value.downcast::<PyDict>() {
        return Ok(Value::Object(to_map(dict, depth)?));
    }
    if let Ok(list) = value.downcast::<PyList>() {
        return list.iter().map(|item| to_json(&item, depth + 1)).collect();
    }
    if let Ok(tuple) = value.downcast::<PyTuple>() {
        return tuple.iter().map(|item| to_json(&item, depth + 1)).collect();
    }
    Err(PyTypeError::new_err(format!(
        "a {} is not a JSON value",
        value.get_type().name()?
    )))
}

fn to_map(dict: &Bound<'_, PyDict>, depth: usize) -> PyResult<Map<String, Value>> {
    let mut map = Map::with_capacity(dict.len());
    for (key, value) in dict.iter() {
        let key = key.downcast::<PyString>().map_err(|_| {
            PyTypeError::new_err("a record's keys (and its objects' keys) must be strings")
        })?;
        map.insert(key.to_str()?.to_owned(), to_json(&value, depth + 1)?);
    }
    Ok(map)
}

fn to_py(py: Python<'_>, value: &Value) -> PyResult<PyObject> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any().unbind(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any().unbind(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any().unbind(),
            _ => n
                .as_f64()
                .unwrap_or(f64::NAN)
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        },
        Value::String(text) => PyString::new(py, text).into_any().unbind(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

/// A diagnostic as its row of the JSON Lines contract, as a dict.
fn row(py: Python<'_>, diagnostic: &Diagnostic) -> PyResult<PyObject> {
    json_row(py, &json::render(diagnostic))
}

fn json_row(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    let value: Value = serde_json::from_str(text).map_err(|err| {
        PyRuntimeError::new_err(format!("bug: a rendered row is not JSON: {err}"))
    })?;
    to_py(py, &value)
}

fn rows(py: Python<'_>, diagnostics: &[Diagnostic]) -> PyResult<Vec<PyObject>> {
    diagnostics.iter().map(|d| row(py, d)).collect()
}

// --- Specs ------------------------------------------------------------------------------

/// Spec arguments: a path (str or os.PathLike), spec text (a str holding a newline), or
/// a list of either.
enum SpecArg {
    Path(PathBuf),
    Text(String),
    /// Text that a file held: compiled as that file, so rows name it.
    Source(PathBuf, String),
}

fn spec_args(specs: &Bound<'_, PyAny>) -> PyResult<Vec<SpecArg>> {
    let one = |item: &Bound<'_, PyAny>| -> PyResult<SpecArg> {
        if let Ok(text) = item.downcast::<PyString>() {
            let text = text.to_str()?;
            return Ok(if text.contains('\n') {
                SpecArg::Text(text.to_owned())
            } else {
                SpecArg::Path(PathBuf::from(text))
            });
        }
        if let Ok((path, text)) = item.extract::<(PathBuf, String)>() {
            return Ok(SpecArg::Source(path, text));
        }
        item.extract::<PathBuf>().map(SpecArg::Path).map_err(|_| {
            PyTypeError::new_err(
                "a spec is a path (str or os.PathLike), spec text (a str), or a (path, text) pair",
            )
        })
    };
    if specs.is_instance_of::<PyString>() || specs.extract::<PathBuf>().is_ok() {
        return Ok(vec![one(specs)?]);
    }
    let items: Vec<Bound<'_, PyAny>> = specs
        .try_iter()
        .map_err(|_| PyTypeError::new_err("specs must be a path, spec text, or a list of them"))?
        .collect::<PyResult<_>>()?;
    items.iter().map(one).collect()
}

fn spec_error(py: Python<'_>, errors: &[Diagnostic]) -> PyErr {
    let text: String = errors
        .iter()
        .map(|d| human::render(d, false, &FileResolver))
        .collect();
    let err = SpecError::new_err(text.trim_end().to_string());
    let value = err.value(py);
    let attached = rows(py, errors).and_then(|rows| value.setattr("diagnostics", rows));
    match attached {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// Compiles every spec given, raising `SpecError` with all the errors.
fn load(py: Python<'_>, specs: &Bound<'_, PyAny>) -> PyResult<Vec<Machine>> {
    let args = spec_args(specs)?;
    let mut machines = Vec::new();
    let mut errors = Vec::new();
    let paths: Vec<PathBuf> = args
        .iter()
        .filter_map(|arg| match arg {
            SpecArg::Path(path) => Some(path.clone()),
            SpecArg::Text(_) | SpecArg::Source(..) => None,
        })
        .collect();
    if !paths.is_empty() {
        let (loaded, failed) = runtime::load_specs(&paths);
        machines.extend(loaded);
        errors.extend(failed);
    }
    for (i, arg) in args.iter().enumerate() {
        let compiled = match arg {
            SpecArg::Path(_) => continue,
            SpecArg::Text(text) => {
                runtime::load_spec_text(Path::new(&format!("<spec {}>", i + 1)), text)
            }
            SpecArg::Source(path, text) => runtime::load_spec_text(path, text),
        };
        match compiled {
            Ok(machine) => machines.push(machine),
            Err(failed) => errors.extend(failed),
        }
    }
    if !errors.is_empty() {
        return Err(spec_error(py, &errors));
    }
    if machines.is_empty() {
        return Err(PyValueError::new_err("no spec given"));
    }
    Ok(machines)
}

fn trace_by(path: Option<&str>) -> PyResult<Option<Vec<tracegate::spec::ast::Segment>>> {
    path.map(|text| {
        tracegate::spec::parse_path(text)
            .map(|path| path.segments)
            .map_err(|message| PyValueError::new_err(format!("invalid trace_by path: {message}")))
    })
    .transpose()
}

fn input_options(format: Option<&str>, select: Option<&str>) -> PyResult<InputOptions> {
    let format = match format {
        None | Some("auto") => None,
        Some(name) => Some(Format::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            PyValueError::new_err(format!(
                "unknown format `{name}`; expected auto, {}",
                names.join(", ")
            ))
        })?),
    };
    let select = select
        .map(|path| {
            Selector::parse(path)
                .map_err(|message| PyValueError::new_err(format!("invalid select path: {message}")))
        })
        .transpose()?;
    Ok(InputOptions { format, select })
}

// --- Monitor ----------------------------------------------------------------------------

/// Checks one conversation's records as they happen. `feed` returns the verdicts that
/// are final now, `allows` asks about a record without changing anything, and
/// `finish` returns the end-of-trace verdicts.
#[pyclass(unsendable, module = "tracegate._native")]
struct Monitor {
    engine: Option<Engine<'static>>,
    /// Records fed so far: the next record's line.
    fed: u64,
    /// Diagnostics `feed` has returned: `finish` returns only those after them.
    handed: usize,
}

impl Monitor {
    fn engine(&self) -> PyResult<&Engine<'static>> {
        self.engine
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the monitor has finished"))
    }
}

/// A record from a dict, numbered `line`; an invalid one is the reason why.
fn record(dict: &Bound<'_, PyDict>, line: u64) -> PyResult<Result<Record<'static>, String>> {
    let map = to_map(dict, 0)?;
    Ok(runtime::record_from_map(map)
        .map(|mut record| {
            record.loc.line = line;
            record
        })
        .map_err(|err| err.message().to_string()))
}

#[pymethods]
impl Monitor {
    #[new]
    #[pyo3(signature = (specs, *, trace_by=None))]
    fn new(py: Python<'_>, specs: &Bound<'_, PyAny>, trace_by: Option<&str>) -> PyResult<Self> {
        let machines: Arc<[Machine]> = load(py, specs)?.into();
        let trace_by = self::trace_by(trace_by)?;
        Ok(Monitor {
            engine: Some(Engine::shared(
                machines,
                Arc::from(Path::new(RUNTIME_FILE)),
                trace_by,
            )),
            fed: 0,
            handed: 0,
        })
    }

    /// Checks the next record; returns the verdicts it makes final (empty: allowed).
    fn feed(&mut self, py: Python<'_>, record: &Bound<'_, PyDict>) -> PyResult<Vec<PyObject>> {
        let line = self.fed + 1;
        let built = self::record(record, line)?;
        let engine = self
            .engine
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the monitor has finished"))?;
        self.fed = line;
        let found = match built {
            Ok(record) => engine.feed(record).to_vec(),
            // Not a record the checker can take: reported as the checker reports a
            // malformed line, and checked no further.
            Err(message) => {
                let mut diagnostic = Diagnostic::new(Code::MalformedRecord, message);
                diagnostic.trace = Some(TraceSite {
                    file: Arc::from(Path::new(RUNTIME_FILE)),
                    trace: None,
                    loc: Location {
                        line,
                        ..Location::default()
                    },
                });
                vec![diagnostic]
            }
        };
        self.handed = engine.reported();
        rows(py, &found)
    }

    /// Whether `record` may come next: {"allowed", "code", "message",
    /// "allowed_events"}. Changes nothing.
    fn allows<'py>(
        &self,
        py: Python<'py>,
        record: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let engine = self.engine()?;
        let answer = PyDict::new(py);
        match self::record(record, self.fed + 1)? {
            Ok(record) => {
                let allowance = engine.allows(&record);
                answer.set_item("allowed", allowance.is_allowed())?;
                answer.set_item("code", allowance.code().map(|c| c.as_str()))?;
                answer.set_item("message", allowance.message())?;
                answer.set_item("allowed_events", allowance.allowed_events().to_vec())?;
            }
            Err(message) => {
                answer.set_item("allowed", false)?;
                answer.set_item("code", "malformed-record")?;
                answer.set_item("message", message)?;
                answer.set_item("allowed_events", PyList::empty(py))?;
            }
        }
        Ok(answer)
    }

    /// Ends the conversation; returns the verdicts only its end can give.
    fn finish(&mut self, py: Python<'_>) -> PyResult<Vec<PyObject>> {
        let engine = self
            .engine
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the monitor has finished"))?;
        let outcome = engine.finish();
        rows(py, outcome.diagnostics.get(self.handed..).unwrap_or(&[]))
    }

    /// How many records were fed.
    #[getter]
    fn records(&self) -> u64 {
        self.fed
    }
}

// --- Whole traces -----------------------------------------------------------------------

/// `tracegate check SPECS TRACES --output json`, as a list of rows (the summary last).
#[pyfunction]
#[pyo3(signature = (specs, traces, *, trace_by=None, format=None, select=None, max_line_bytes=None))]
fn check(
    py: Python<'_>,
    specs: &Bound<'_, PyAny>,
    traces: &Bound<'_, PyAny>,
    trace_by: Option<&str>,
    format: Option<&str>,
    select: Option<&str>,
    max_line_bytes: Option<usize>,
) -> PyResult<Vec<PyObject>> {
    let mut spec_paths = Vec::new();
    for arg in spec_args(specs)? {
        match arg {
            SpecArg::Path(path) => spec_paths.push(path),
            SpecArg::Text(_) | SpecArg::Source(..) => {
                return Err(PyTypeError::new_err(
                    "check takes spec paths; use Checker for spec text",
                ));
            }
        }
    }
    let trace_paths = paths(traces)?;
    let options = CheckOptions {
        trace_by: self::trace_by(trace_by)?,
        max_line_bytes,
        ..CheckOptions::default()
    };
    let input = input_options(format, select)?;
    let report =
        py.allow_threads(|| runtime::check_corpus(&spec_paths, &trace_paths, &options, &input));
    if report.spec_errors > 0 {
        return Err(spec_error(py, &report.diagnostics[..report.spec_errors]));
    }
    let mut out = rows(py, &report.diagnostics)?;
    out.push(json_row(py, &json::render_summary(&report.summary))?);
    Ok(out)
}

fn paths(value: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if value.is_instance_of::<PyString>() {
        return Ok(vec![value.extract()?]);
    }
    if let Ok(path) = value.extract::<PathBuf>() {
        return Ok(vec![path]);
    }
    value
        .try_iter()
        .map_err(|_| PyTypeError::new_err("traces must be a path or a list of paths"))?
        .map(|item| item?.extract::<PathBuf>())
        .collect()
}

/// Compiled specs and reading options, for checking many traces' content (a task of a
/// distributed engine checks its share of a corpus with one).
#[pyclass(frozen, module = "tracegate._native")]
struct Checker {
    specs: Arc<[Machine]>,
    options: CheckOptions,
    input: InputOptions,
}

#[pymethods]
impl Checker {
    #[new]
    #[pyo3(signature = (specs, *, trace_by=None, format=None, select=None, max_line_bytes=None))]
    fn new(
        py: Python<'_>,
        specs: &Bound<'_, PyAny>,
        trace_by: Option<&str>,
        format: Option<&str>,
        select: Option<&str>,
        max_line_bytes: Option<usize>,
    ) -> PyResult<Self> {
        Ok(Checker {
            specs: load(py, specs)?.into(),
            options: CheckOptions {
                trace_by: self::trace_by(trace_by)?,
                max_line_bytes,
                ..CheckOptions::default()
            },
            input: input_options(format, select)?,
        })
    }

    /// Checks one trace file's content, named `file` in the rows, as `tracegate check`
    /// checks the file. Returns (rows, records, traces, synthesized).
    fn check_bytes(
        &self,
        py: Python<'_>,
        file: PathBuf,
        data: &[u8],
    ) -> PyResult<(Vec<PyObject>, u64, u64, u64)> {
        let outcome = py.allow_threads(|| {
            runtime::check_bytes(
                &self.specs,
                Arc::from(file.as_path()),
                data,
                &self.options,
                &self.input,
            )
        });
        Ok((
            rows(py, &outcome.diagnostics)?,
            outcome.records,
            outcome.traces,
            outcome.synthesized,
        ))
    }

    /// The specs, in the order they are checked, as (path, text) pairs: what a task
    /// elsewhere needs to build the same checker (`Checker(checker.sources)`).
    #[getter]
    fn sources(&self) -> Vec<(String, String)> {
        self.specs
            .iter()
            .map(|machine| {
                let path = machine.source.path.to_string_lossy().into_owned();
                (path, machine.source.text.clone())
            })
            .collect()
    }
}

// --- SDK shapes -------------------------------------------------------------------------

fn shaped(
    py: Python<'_>,
    built: Result<Record<'static>, runtime::RecordError>,
) -> PyResult<PyObject> {
    let record = built.map_err(|err| PyValueError::new_err(err.message().to_string()))?;
    let mut map = Map::new();
    for key in record.fields.keys() {
        if let Some(raw) = record.fields.raw_text(key) {
            let value: Value = serde_json::from_str(&raw).map_err(|err| {
                PyRuntimeError::new_err(format!("bug: a field is not JSON: {err}"))
            })?;
            map.insert(key.to_string(), value);
        }
    }
    to_py(py, &Value::Object(map))
}

/// The native record of one element of an OpenAI Chat Completions `tool_calls`.
#[pyfunction]
fn openai_tool_call(py: Python<'_>, call: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    shaped(py, runtime::openai_tool_call(&to_json(call, 0)?))
}

/// The native record of an OpenAI Chat Completions `role: "tool"` message.
#[pyfunction]
fn openai_tool_result(py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    shaped(py, runtime::openai_tool_result(&to_json(message, 0)?))
}

/// The native record of an Anthropic `tool_use` content block.
#[pyfunction]
fn anthropic_tool_use(py: Python<'_>, block: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    shaped(py, runtime::anthropic_tool_use(&to_json(block, 0)?))
}

/// The native record of an Anthropic `tool_result` content block.
#[pyfunction]
fn anthropic_tool_result(py: Python<'_>, block: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    shaped(py, runtime::anthropic_tool_result(&to_json(block, 0)?))
}

/// The native record of an MCP `tools/call` (or any JSON-RPC) request.
#[pyfunction]
fn mcp_request(py: Python<'_>, request: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    shaped(py, runtime::mcp_request(&to_json(request, 0)?))
}

/// The native record of an MCP reply to `request`.
#[pyfunction]
fn mcp_result(
    py: Python<'_>,
    request: &Bound<'_, PyAny>,
    reply: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    shaped(
        py,
        runtime::mcp_result(&to_json(request, 0)?, &to_json(reply, 0)?),
    )
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SpecError", m.py().get_type::<SpecError>())?;
    m.add_class::<Monitor>()?;
    m.add_class::<Checker>()?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(openai_tool_call, m)?)?;
    m.add_function(wrap_pyfunction!(openai_tool_result, m)?)?;
    m.add_function(wrap_pyfunction!(anthropic_tool_use, m)?)?;
    m.add_function(wrap_pyfunction!(anthropic_tool_result, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_request, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_result, m)?)?;
    Ok(())
}
