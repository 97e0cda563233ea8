//! Finding a non-finite float (NaN or an infinity) in a value before it is
//! sent as structured content. JSON has no such numbers: serde_json writes
//! them as `null`, so the host would see `null` where the output schema
//! says number and the author would never learn why. This serializer walks
//! the value as serde_json would and stops at the first one, with its path
//! (`items[2].price`), so the error names the field.

use std::fmt;

use serde::ser::{self, Serialize};

/// The path and value of the first non-finite float in `value`, if any.
pub(crate) fn first_non_finite<T: Serialize + ?Sized>(value: &T) -> Option<(String, f64)> {
    let mut path = Vec::new();
    match value.serialize(Finder { path: &mut path }) {
        Err(Stop::Found(path, value)) => Some((path, value)),
        Ok(()) | Err(Stop::Other) => None,
    }
}

/// Why the walk stopped early.
#[derive(Debug)]
enum Stop {
    Found(String, f64),
    /// A serializer error of the value's own (serde_json reports it too).
    Other,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Found(path, value) => write!(f, "{path} is {value}"),
            Stop::Other => f.write_str("not serializable"),
        }
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop::Other
    }
}

/// One step of the path: a field or a key, or an index.
enum Step {
    Field(String),
    Index(usize),
}

fn render(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Field(name) if out.is_empty() => out.push_str(name),
            Step::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    if out.is_empty() {
        out.push_str("the value");
    }
    out
}

struct Finder<'a> {
    path: &'a mut Vec<Step>,
}

impl Finder<'_> {
    fn float(self, value: f64) -> Result<(), Stop> {
        if value.is_finite() {
            Ok(())
        } else {
            Err(Stop::Found(render(self.path), value))
        }
    }

    fn nested<T: Serialize + ?Sized>(&mut self, step: Step, value: &T) -> Result<(), Stop> {
        self.path.push(step);
        let result = value.serialize(Finder { path: self.path });
        self.path.pop();
        result
    }
}

/// A map key as serde_json writes it (keys are strings or numbers).
fn key_text<T: Serialize + ?Sized>(key: &T) -> String {
    match serde_json::to_value(key) {
        Ok(serde_json::Value::String(text)) => text,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_owned(),
    }
}

macro_rules! fine {
    ($($method:ident($ty:ty)),* $(,)?) => {
        $(fn $method(self, _: $ty) -> Result<(), Stop> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for Finder<'a> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Items<'a>;
    type SerializeTuple = Items<'a>;
    type SerializeTupleStruct = Items<'a>;
    type SerializeTupleVariant = Items<'a>;
    type SerializeMap = Fields<'a>;
    type SerializeStruct = Fields<'a>;
    type SerializeStructVariant = Fields<'a>;

    fine!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    );

    fn serialize_f32(self, value: f32) -> Result<(), Stop> {
        self.float(f64::from(value))
    }
    fn serialize_f64(self, value: f64) -> Result<(), Stop> {
        self.float(value)
    }
    fn serialize_none(self) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Stop> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        mut self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.nested(Step::Field(variant.to_owned()), value)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Items<'a>, Stop> {
        Ok(Items {
            path: self.path,
            next: 0,
            variant: false,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Items<'a>, Stop> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Items<'a>, Stop> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Items<'a>, Stop> {
        self.path.push(Step::Field(variant.to_owned()));
        Ok(Items {
            path: self.path,
            next: 0,
            variant: true,
        })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Fields<'a>, Stop> {
        Ok(Fields {
            path: self.path,
            key: None,
            variant: false,
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'a>, Stop> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Fields<'a>, Stop> {
        self.path.push(Step::Field(variant.to_owned()));
        Ok(Fields {
            path: self.path,
            key: None,
            variant: true,
        })
    }
}

/// The elements of a sequence or tuple, numbered.
struct Items<'a> {
    path: &'a mut Vec<Step>,
    next: usize,
    /// A tuple variant, whose name was pushed onto the path.
    variant: bool,
}

impl Items<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        let index = self.next;
        self.next += 1;
        Finder { path: self.path }.nested(Step::Index(index), value)
    }

    fn finish(self) -> Result<(), Stop> {
        if self.variant {
            self.path.pop();
        }
        Ok(())
    }
}

/// The four ways serde hands over a sequence's elements, all numbered alike.
macro_rules! items {
    ($($trait:ident::$method:ident),*) => {$(
        impl ser::$trait for Items<'_> {
            type Ok = ();
            type Error = Stop;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
                self.item(value)
            }
            fn end(self) -> Result<(), Stop> {
                self.finish()
            }
        }
    )*};
}

items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// The entries of a map or the fields of a struct, by name.
struct Fields<'a> {
    path: &'a mut Vec<Step>,
    key: Option<String>,
    /// A struct variant, whose name was pushed onto the path.
    variant: bool,
}

impl Fields<'_> {
    fn field<T: Serialize + ?Sized>(&mut self, name: String, value: &T) -> Result<(), Stop> {
        Finder { path: self.path }.nested(Step::Field(name), value)
    }

    fn finish(self) -> Result<(), Stop> {
        if self.variant {
            self.path.pop();
        }
        Ok(())
    }
}

impl ser::SerializeMap for Fields<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        self.key = Some(key_text(key));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        let key = self.key.take().unwrap_or_default();
        self.field(key, value)
    }
    fn end(self) -> Result<(), Stop> {
        self.finish()
    }
}

/// A struct's fields and a struct variant's, alike.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Fields<'_> {
            type Ok = ();
            type Error = Stop;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                name: &'static str,
                value: &T,
            ) -> Result<(), Stop> {
                self.field(name.to_owned(), value)
            }
            fn end(self) -> Result<(), Stop> {
                self.finish()
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(serde::Serialize)]
    struct Line {
        name: String,
        price: f64,
    }

    #[derive(serde::Serialize)]
    struct Order {
        total: f32,
        lines: Vec<Line>,
        rates: BTreeMap<String, f64>,
        note: Option<f64>,
    }

    fn order() -> Order {
        Order {
            total: 3.5,
            lines: vec![
                Line {
                    name: "a".into(),
                    price: 1.0,
                },
                Line {
                    name: "b".into(),
                    price: 2.5,
                },
            ],
            rates: BTreeMap::from([("eur".into(), 1.1)]),
            note: None,
        }
    }

    #[test]
    fn a_finite_value_has_none() {
        assert!(first_non_finite(&order()).is_none());
    }

    #[test]
    fn the_path_names_the_field_the_index_and_the_key() {
        let mut value = order();
        value.lines[1].price = f64::NAN;
        let (path, found) = first_non_finite(&value).unwrap();
        assert_eq!(path, "lines[1].price");
        assert!(found.is_nan());

        let mut value = order();
        value.rates.insert("usd".into(), f64::INFINITY);
        assert_eq!(
            first_non_finite(&value),
            Some(("rates.usd".into(), f64::INFINITY))
        );

        let mut value = order();
        value.total = f32::NEG_INFINITY;
        assert_eq!(
            first_non_finite(&value),
            Some(("total".into(), f64::NEG_INFINITY))
        );

        let mut value = order();
        value.note = Some(f64::NAN);
        assert_eq!(first_non_finite(&value).unwrap().0, "note");
    }

    #[test]
    fn variants_are_named_and_left_behind() {
        #[derive(serde::Serialize)]
        enum Shape {
            Pair(f64, f64),
            Circle { radius: f64 },
        }
        assert_eq!(
            first_non_finite(&vec![Shape::Pair(1.0, 2.0), Shape::Pair(1.0, f64::NAN)])
                .unwrap()
                .0,
            "[1].Pair[1]"
        );
        assert_eq!(
            first_non_finite(&(Shape::Circle { radius: 1.0 }, f64::INFINITY)),
            Some(("[1]".into(), f64::INFINITY))
        );
    }

    #[test]
    fn a_bare_float_is_the_value() {
        assert_eq!(first_non_finite(&f64::NAN).unwrap().0, "the value");
    }
}
