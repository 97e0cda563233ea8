module corral.plugin/{{name}}

go 1.27
