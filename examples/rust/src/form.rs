//! Filling an elicitation form (`elicitation/create`, form mode) from a
//! terminal: each field's label, its default, and typed answers read as
//! the field's type.

use libacp_core::v1;

/// A field's title, else its name.
pub fn title<'a>(name: &'a str, field: &'a v1::ElicitationPropertySchema) -> &'a str {
    parts(field).0.unwrap_or(name)
}

/// A field's title (or its name), with its description.
pub fn label(name: &str, field: &v1::ElicitationPropertySchema) -> String {
    let title = title(name, field);
    match parts(field).1 {
        Some(d) if d != title => format!("{title} ({d})"),
        _ => title.to_owned(),
    }
}

/// A field's title and description.
fn parts(field: &v1::ElicitationPropertySchema) -> (Option<&str>, Option<&str>) {
    let (title, description) = match field {
        v1::ElicitationPropertySchema::String(p) => (&p.title, &p.description),
        v1::ElicitationPropertySchema::Number(p) => (&p.title, &p.description),
        v1::ElicitationPropertySchema::Integer(p) => (&p.title, &p.description),
        v1::ElicitationPropertySchema::Boolean(p) => (&p.title, &p.description),
        v1::ElicitationPropertySchema::Array(p) => (&p.title, &p.description),
        _ => (&None, &None),
    };
    (title.as_deref(), description.as_deref())
}

/// The field's default value, if the schema gives one.
pub fn default_of(field: &v1::ElicitationPropertySchema) -> Option<v1::ElicitationContentValue> {
    match field {
        v1::ElicitationPropertySchema::String(p) => p.default.clone().map(Into::into),
        v1::ElicitationPropertySchema::Number(p) => p.default.map(Into::into),
        v1::ElicitationPropertySchema::Integer(p) => p.default.map(Into::into),
        v1::ElicitationPropertySchema::Boolean(p) => p.default.map(Into::into),
        v1::ElicitationPropertySchema::Array(p) => p.default.clone().map(Into::into),
        _ => None,
    }
}

/// Whether this terminal client can read an answer for the field.
pub fn answerable(field: &v1::ElicitationPropertySchema) -> bool {
    matches!(
        field,
        v1::ElicitationPropertySchema::String(_)
            | v1::ElicitationPropertySchema::Number(_)
            | v1::ElicitationPropertySchema::Integer(_)
            | v1::ElicitationPropertySchema::Boolean(_)
            | v1::ElicitationPropertySchema::Array(_)
    )
}

/// Reads a typed answer as the field's type (an array as comma-separated
/// values). `Err` says what was expected.
pub fn parse(
    field: &v1::ElicitationPropertySchema,
    text: &str,
) -> Result<v1::ElicitationContentValue, String> {
    let text = text.trim();
    match field {
        v1::ElicitationPropertySchema::Number(_) => text
            .parse::<f64>()
            .map(Into::into)
            .map_err(|_| "a number".to_owned()),
        v1::ElicitationPropertySchema::Integer(_) => text
            .parse::<i64>()
            .map(Into::into)
            .map_err(|_| "a whole number".to_owned()),
        v1::ElicitationPropertySchema::Boolean(_) => match text.to_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Ok(true.into()),
            "n" | "no" | "false" | "0" => Ok(false.into()),
            _ => Err("yes or no".to_owned()),
        },
        v1::ElicitationPropertySchema::Array(_) => Ok(text
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .into()),
        _ => Ok(text.into()),
    }
}

/// A value as the user would type it.
pub fn show(value: &v1::ElicitationContentValue) -> String {
    match value {
        v1::ElicitationContentValue::String(s) => s.clone(),
        v1::ElicitationContentValue::Integer(i) => i.to_string(),
        v1::ElicitationContentValue::Number(n) => n.to_string(),
        v1::ElicitationContentValue::Boolean(b) => if *b { "yes" } else { "no" }.to_owned(),
        v1::ElicitationContentValue::StringArray(v) => v.join(", "),
        _ => "?".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_the_field_type() {
        let int = v1::ElicitationPropertySchema::Integer(v1::IntegerPropertySchema::new());
        assert_eq!(parse(&int, " 42 "), Ok(42.into()));
        assert!(parse(&int, "many").is_err());
        let flag = v1::ElicitationPropertySchema::Boolean(v1::BooleanPropertySchema::new());
        assert_eq!(parse(&flag, "Yes"), Ok(true.into()));
        let text = v1::ElicitationPropertySchema::String(
            v1::StringPropertySchema::new()
                .title("Your name".to_owned())
                .default_value("friend".to_owned()),
        );
        assert_eq!(parse(&text, "Ada\n"), Ok("Ada".into()));
        assert_eq!(default_of(&text), Some("friend".into()));
        assert_eq!(label("name", &text), "Your name");
        assert_eq!(title("name", &flag), "name");
        assert_eq!(show(&true.into()), "yes");
    }
}
