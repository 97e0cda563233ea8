module corral.plugin/secrets-go

go 1.27
