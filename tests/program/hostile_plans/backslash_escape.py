# expect: parse-error line=3
def plan():
	walk('kit\x63hen')
