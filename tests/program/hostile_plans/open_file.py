# expect: parse-error line=3
def plan():
	open('/etc/passwd')
