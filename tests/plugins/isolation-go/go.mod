module corral.plugin/isolation-go

go 1.27
